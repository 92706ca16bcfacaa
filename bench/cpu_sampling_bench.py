#!/usr/bin/env python3
"""Cost of --cpu-sampling on a CPU-bound native loop, beside py-spy in the same run.

    bench/cpu_sampling_bench.py --build DIR [--hz 1000] [--rounds 3] [--py-spy PATH] [--short]

The program is the same for every peer: python3 runs a C loop (a shared library built here with
cc -O2) ROUNDS x 8 times and prints the loop's wall time; it first calls the stand-in's
cudaFree(0) (LD_LIBRARY_PATH=DIR/tests/cudasim/lib), which starts gprof-run's collector. Each
peer runs it: plain, under gprof-run without sampling, under `gprof-run --cpu-sampling=HZ`
(the sampler process, perf in process, then timer; each compared with gprof-run without
sampling), and under
`py-spy record --native -r HZ` (py-spy needs a Python process; --native makes it stop the
process for each sample). Runs alternate, best of ROUNDS each, by the loop's wall time and,
separately, by the process's CPU time during the loop (a loaded machine stretches wall time; the
CPU time shows what the sampler adds to the program's own threads, the kernel's sample interrupt
included; py-spy's cost is mostly the program stopped, i.e. wall). Cost per sample = (loop time
with the sampler - plain) / samples taken in the whole run (so per-sample costs are lower
bounds where the run has samples outside the loop); per second = the slowdown. Prints FIGURE|
lines.

Then where a perf sample's cost goes (bench/cpu_sample_cost.c, no gprof-run): a C loop of fixed
work on one thread with no event, a counting task-clock event, sampling at HZ with IP only, and
with the callchain at 2 and 32 frames deep; ROUNDS each, alternating, best of each; per sample =
CPU added over the previous step divided by the samples in its ring.
Nothing here asserts on time (verified on the stand-in; no GPU).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

LOOP_C = r"""
#include <stdint.h>
__attribute__((noinline)) double native_spin(long n) {
  double x = 1.0;
  for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1.0 / (x + 3.0);
  return x;
}
"""

DRIVER = r"""
import ctypes, sys, time
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaFree(None)  # starts CUDA, and with it gprof-run's collector
lib = ctypes.CDLL(sys.argv[1])
lib.native_spin.restype = ctypes.c_double
n = int(sys.argv[2])
t, c = time.perf_counter(), time.process_time()
for _ in range(8):
    lib.native_spin(n)
print("LOOP_S %.6f CPU_S %.6f" % (time.perf_counter() - t, time.process_time() - c))
"""


def run(cmd, env):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def loop_seconds(out):
    """(wall, CPU of the process) seconds of the loop."""
    m = re.search(r"LOOP_S ([0-9.]+) CPU_S ([0-9.]+)", out)
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--hz", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--py-spy", default="py-spy")
    ap.add_argument("--short", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    launcher = os.path.join(build, "bin", "gprof-run")
    standin = os.path.join(build, "tests", "cudasim", "lib")
    n = "2000000" if a.short else "20000000"
    with tempfile.TemporaryDirectory() as tmp:
        so = os.path.join(tmp, "libspin.so")
        src = os.path.join(tmp, "spin.c")
        with open(src, "w") as f:
            f.write(LOOP_C)
        run(["cc", "-O2", "-fno-omit-frame-pointer", "-shared", "-fPIC", "-o", so, src], os.environ)
        driver = os.path.join(tmp, "driver.py")
        with open(driver, "w") as f:
            f.write(DRIVER)
        env = dict(os.environ, LD_LIBRARY_PATH=standin)
        program = [sys.executable, driver, so, n]
        backends = ("process", "perf", "timer")
        peers = {"plain": [], "off": [], "process": [], "perf": [], "timer": [], "py-spy": []}
        samples = {"process": [], "perf": [], "timer": [], "py-spy": []}
        for i in range(a.rounds):
            peers["plain"].append(loop_seconds(run(program, env).stdout))
            for backend in ("off",) + backends:
                out = os.path.join(tmp, "%s%d" % (backend, i))
                rate = "--cpu-sampling=%d" % (0 if backend == "off" else a.hz)
                r = run([launcher, "-q", "-q", "-o", out, "--cupti-lib",
                         os.path.join(standin, "libcupti.so.13"), rate,
                         "--"] + program, dict(env, GPROF_CPU_SAMPLING_BACKEND=
                                               "auto" if backend == "off" else backend))
                peers[backend].append(loop_seconds(r.stdout))
                if backend == "off":
                    continue
                stats = run([launcher, "stats", out, "--report", "cpu_sample_sum"], env).stdout
                samples[backend].append(int(re.search(r"(\d+) samples at", stats).group(1)))
            raw = os.path.join(tmp, "pyspy%d.txt" % i)
            r = run([a.py_spy, "record", "--native", "-r", str(a.hz), "-f", "raw", "-o", raw,
                     "--"] + program, env)
            peers["py-spy"].append(loop_seconds(r.stdout))
            samples["py-spy"].append(int(re.search(r"Samples: (\d+)", r.stdout + r.stderr).group(1)))
        for k, label in ((0, "wall"), (1, "cpu")):
            plain = min(x[k] for x in peers["plain"])
            print("plain loop %s: best %.4f s of %s" % (label, plain, [x[k] for x in peers["plain"]]))
            off = min(x[k] for x in peers["off"])
            print("gprof-run without sampling %s: best %.4f s (%.3fx plain)" % (label, off, off / plain))
            for peer in backends + ("py-spy",):
                base = off if peer != "py-spy" else plain  # gprof-run's peers: over gprof-run off
                times = [x[k] for x in peers[peer]]
                best = min(times)
                taken = samples[peer][times.index(best)]
                per_sample_us = (best - base) / taken * 1e6 if taken else float("nan")
                print("%s %s: best %.4f s of %s, samples %s" % (peer, label, best, times, samples[peer]))
                print("FIGURE|cpu-sampling %s %d Hz, %s|%.1f us per sample|%.3fx|%s %.4f s|INFO"
                      % (peer, a.hz, label, per_sample_us, best / base,
                         "plain" if peer == "py-spy" else "gprof-run off", base))
        cost_breakdown(tmp, a)


def cost_breakdown(tmp, a):
    """Figures 18d-18g: the kernel's share of a sample, on a plain C loop (cpu_sample_cost.c)."""
    exe = os.path.join(tmp, "cpu_sample_cost")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_sample_cost.c")
    run(["cc", "-O2", "-fno-omit-frame-pointer", "-o", exe, src], os.environ)
    millions = "4" if a.short else "80"
    modes = (("none", 2), ("count", 2), ("ip", 2), ("callchain", 2), ("callchain", 32))
    best = {}
    for _ in range(a.rounds):
        for mode, depth in modes:
            out = run([exe, mode, millions, str(a.hz), str(depth)], os.environ).stdout
            m = re.search(r"CPU_NS (\d+) SAMPLES (\d+)", out)
            cpu, n = int(m.group(1)), int(m.group(2))
            if (mode, depth) not in best or cpu < best[(mode, depth)][0]:
                best[(mode, depth)] = (cpu, n)
    for (mode, depth), (cpu, n) in best.items():
        print("cost %s depth %d: best %.4f s, %d samples" % (mode, depth, cpu / 1e9, n))
    none = best[("none", 2)][0]
    steps = (("18d", "a counting event, no sample (context switches)", ("count", 2), ("none", 2)),
             ("18e", "the sample interrupt, IP only", ("ip", 2), ("count", 2)),
             ("18f", "the callchain, 2 frames", ("callchain", 2), ("ip", 2)),
             ("18g", "the callchain, 32 frames", ("callchain", 32), ("ip", 2)))
    for fig, what, step, prev in steps:
        n = best[step][1] or best[("ip", 2)][1]
        per = (best[step][0] - best[prev][0]) / n / 1e3 if n else float("nan")
        print("FIGURE|%s cpu_sample_cost %d Hz, %s|%.1f us per sample|%.3fx|none %.4f s|INFO"
              % (fig, a.hz, what, per, best[step][0] / none, none / 1e9))


if __name__ == "__main__":
    main()
