"""Figure 20 (bench/run-all): what rendering a long run costs the launcher.

launch_loop N on the stand-in (0 ns API: the simulated GPU keeps the stand-in's own kernel time)
under the injection library writes one dump; `gprof-run report DIR` then renders it with the
default outputs (table, findings, trace.json, trace.pftrace, report.html), alone in its process.
Past --segment-render-mb (128 MiB of dump, about 2 M launches) the launcher renders segment by
segment: 1 M launches is rendered whole, 10 M and 20 M in segments, so the two larger sizes show
whether the segmented render's memory stays flat.
Measured from wait4: the launcher's peak RSS (ru_maxrss) and its CPU time (user + sys; the
machine is shared, so wall time would mostly measure waiting for a core), per million launches.
With --peer-build, the same dump is rendered by that build's gprof-run in the same run (the
previous commit's launcher), alternating with ours.
Figure 20d: `gprof-run export DIR` (the SQLite export, nsys's tables) of the same dump, measured
the same way: past --segment-render-mb it is written segment by segment.
"""
import os
import shutil
import subprocess


def _render(gprof_run, out_dir):
    """Renders out_dir with gprof_run; returns (peak RSS MiB, CPU s, trace.json bytes)."""
    with open(out_dir + ".log", "w+") as log:
        p = subprocess.Popen([gprof_run, "report", out_dir], stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(p.pid, 0)
        log.seek(0)
        err = log.read()[-2000:]
    if status != 0:
        raise RuntimeError("gprof-run report %s exited with status %d: %s" % (out_dir, status, err))
    trace = os.path.join(out_dir, "trace.json")
    size = os.path.getsize(trace) if os.path.exists(trace) else 0
    for f in os.listdir(out_dir):  # the outputs of 10 M launches are ~9 GB: keep only the dump
        path = os.path.join(out_dir, f)
        if not f.endswith(".gpdump") and f != "gprof-run.json":
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
    return usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime, size


def _export(gprof_run, out_dir):
    """Exports out_dir's dump with gprof_run; returns (peak RSS MiB, CPU s, database bytes)."""
    db = os.path.join(out_dir, "figure.sqlite")
    with open(out_dir + ".export.log", "w+") as log:
        p = subprocess.Popen([gprof_run, "export", out_dir, "-o", db, "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(p.pid, 0)
        log.seek(0)
        err = log.read()[-2000:]
    if status != 0:
        raise RuntimeError("gprof-run export %s exited with status %d: %s" % (out_dir, status, err))
    size = os.path.getsize(db)
    os.remove(db)
    return usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime, size


def _row(figure, what, n, a, b, unit, target, verdict):
    millions = int(n) / 1e6
    measured = "%.0f MiB | %.2f s | %.0f B" % (a[0], a[1] / millions, a[2] / int(n))
    if b is not None:
        measured += " (peer %.0f MiB | %.2f s | %.0f B)" % (b[0], b[1] / millions, b[2] / int(n))
    return [figure, what + ": peak RSS | CPU s per million launches | " + unit, measured, target,
            verdict]


def render_figure(build, short, tmp, peer_build=None):
    sizes = ["20000", "100000"] if short else ["1000000", "10000000", "20000000"]
    sim = os.path.join(build, "tests", "cudasim", "lib")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")}
    env.update(LD_LIBRARY_PATH=sim + os.pathsep + env.get("LD_LIBRARY_PATH", ""),
               GPROF_CUPTI_LIB=os.path.join(sim, "libcupti.so.13"),
               CUDA_INJECTION64_PATH=os.path.join(build, "lib", "libgprof_inject.so"))
    ours = os.path.join(build, "bin", "gprof-run")
    peer = os.path.join(peer_build, "bin", "gprof-run") if peer_build else None
    rows = []
    for n in sizes:
        d = os.path.join(tmp, "render-%s" % n)
        os.makedirs(d)
        r = subprocess.run([os.path.join(build, "bin", "launch_loop"), n],
                           env=dict(env, GPROF_OUTPUT_DIR=d), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("launch_loop %s exited with status %d" % (n, r.returncode))
        a = _render(ours, d)
        b = _render(peer, d) if peer else None
        target = "<= 1024 MiB, flat" if n != sizes[0] else "-"
        verdict = "INFO" if short or n == sizes[0] else ("PASS" if a[0] <= 1024 else "FAIL")
        rows.append(_row("20", "launcher rendering launch_loop %s (stand-in)" % n, n, a, b,
                         "trace.json B/launch", target, verdict))
        a = _export(ours, d)
        b = _export(peer, d) if peer else None
        verdict = "INFO" if short or n == sizes[0] else ("PASS" if a[0] <= 1024 else "FAIL")
        rows.append(_row("20d", "gprof-run export of launch_loop %s (stand-in)" % n, n, a, b,
                         "SQLite B/launch", target, verdict))
        shutil.rmtree(d)
    return rows
