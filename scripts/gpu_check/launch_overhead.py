"""Step 8 of scripts/gpu-check: microseconds that profiling adds to each kernel launch.

launch_loop (one tiny kernel per iteration) runs unprofiled and under gprof-run at two sizes.
When the example prints its own loop time, that is used; otherwise the per-launch cost is the
slope of process wall time between the two sizes, which cancels fixed costs (start-up, CUDA
init) but includes gprof-run's per-event work after the program exits (dump, table, trace).
The torch twin (torch_loop.py --workload launch: one x.add_(1) per iteration) runs unprofiled,
under torch.profiler and under gprof-run, timed inside the script.
The C loop's figures are reported, not judged; the torch loop's eager-op cost is judged against
torch.profiler's on the same loop in the same run (judge_eager_overhead).
"""

import os
import re

from report import FAIL, PASS, SKIP, WARN
import torch_compare

SIZES = (20000, 100000)
TORCH_LAUNCHES = 20000
_LOOP_TIME_RE = re.compile(r"\b(?:loop|elapsed|launch_loop)_?(ns|us|ms|s)=([0-9.]+)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def printed_loop_seconds(stdout):
    m = _LOOP_TIME_RE.search(stdout)
    return float(m.group(2)) * _UNIT[m.group(1)] if m else None


def c_loop(runner, section):
    exe = runner.bin("launch_loop")
    if not os.path.exists(exe):
        section.status(FAIL, f"{exe} was not built")
        return
    runs = {}
    for n in SIZES:
        plain = runner.run([exe, str(n)], timeout_s=60)
        prof = runner.profile(f"launch-{n}", [exe, str(n)], timeout_s=90)
        ok = section.check(plain.ok() and prof.ok(), f"launch_loop {n}: unprofiled exited "
                           f"{plain.returncode}, under gprof-run exited {prof.returncode}")
        if not ok:
            section.add("```", (plain if not plain.ok() else prof).tail(), "```", "")
            return
        runs[n] = (plain, prof)
    rows = []
    for n, (plain, prof) in runs.items():
        lp, lg = printed_loop_seconds(plain.stdout), printed_loop_seconds(prof.stdout)
        rows.append([n, f"{plain.seconds:.3f}", f"{prof.seconds:.3f}",
                     f"{lp:.4f}" if lp is not None else "-", f"{lg:.4f}" if lg is not None else "-"])
    section.table(["launches", "unprofiled process s", "gprof-run process s",
                   "unprofiled loop s", "gprof-run loop s"], rows)
    n = SIZES[-1]
    lp, lg = printed_loop_seconds(runs[n][0].stdout), printed_loop_seconds(runs[n][1].stdout)
    if lp is not None and lg is not None:
        added = (lg - lp) / n * 1e6
        section.status(PASS, f"launch_loop: gprof-run adds {added:.2f} us per launch inside the "
                             f"program (loop time the example prints; {lp / n * 1e6:.2f} us "
                             "unprofiled)")
    a, b = SIZES
    slope_plain = (runs[b][0].seconds - runs[a][0].seconds) / (b - a) * 1e6
    slope_prof = (runs[b][1].seconds - runs[a][1].seconds) / (b - a) * 1e6
    section.status(PASS, f"launch_loop: {slope_prof - slope_plain:.2f} us per launch end to end "
                         f"(process wall-time slope {a}->{b} launches: {slope_plain:.2f} us "
                         f"unprofiled, {slope_prof:.2f} us under gprof-run, trace writing included)")


def judge_eager_overhead(base_us, torch_us, gprof_us):
    """(status, text): the microseconds gprof-run adds per eager op (one x.add_(1)) against what
    torch.profiler adds on the same loop, in the same run. PASS up to torch.profiler's cost,
    WARN up to 1.5x (a shared machine's spread), FAIL above; WARN when torch.profiler's own cost
    is too small to compare (under 0.05 us)."""
    ours, theirs = gprof_us - base_us, torch_us - base_us
    text = (f"eager op: gprof-run adds {ours:.2f} us per op, torch.profiler {theirs:.2f} us "
            f"(unprofiled {base_us:.2f} us)")
    if theirs < 0.05:
        return WARN, text + ": torch.profiler's cost is too small to compare with"
    ratio = ours / theirs
    status = PASS if ratio <= 1.0 else WARN if ratio <= 1.5 else FAIL
    return status, text + f" — {ratio:.2f}x torch.profiler (PASS <= 1x, WARN <= 1.5x)"


def torch_loop(runner, section, python):
    status, text = torch_compare.torch_status(runner, python)
    if status != "ok":
        why = "torch not importable" if status == "no-torch" else "torch has no CUDA device"
        section.status(SKIP if runner.standin else FAIL, f"torch launch loop skipped: {why}"
                       if runner.standin else f"torch launch loop: {why}")
        return
    args = ["--launches", str(TORCH_LAUNCHES)]
    got = {}
    for mode in ("plain", "torch", "gprof"):
        r, data, _ = torch_compare.run_loop(runner, python, mode, "launch", args, timeout_s=90)
        if section.check(data is not None and r.ok(), f"torch launch loop, {mode} run exited "
                         f"{r.returncode}"):
            got[mode] = data["measured_seconds"]
        else:
            section.add("```", r.tail(), "```", "")
    if "plain" not in got:
        return
    base = got["plain"] / TORCH_LAUNCHES * 1e6
    rows = [["unprofiled", f"{base:.2f}", "-"]]
    for mode, label in (("torch", "torch.profiler"), ("gprof", "gprof-run")):
        if mode in got:
            per = got[mode] / TORCH_LAUNCHES * 1e6
            rows.append([label, f"{per:.2f}", f"{per - base:+.2f}"])
    section.add(f"torch loop of {TORCH_LAUNCHES} `x.add_(1)` launches, timed inside the script:",
                "")
    section.table(["run", "us per launch", "us added per launch"], rows)
    if "torch" in got and "gprof" in got:
        section.status(*judge_eager_overhead(base, got["torch"] / TORCH_LAUNCHES * 1e6,
                                             got["gprof"] / TORCH_LAUNCHES * 1e6))


def run(runner, section, python):
    c_loop(runner, section)
    torch_loop(runner, section, python)
