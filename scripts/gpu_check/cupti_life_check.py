"""Step 9c of scripts/gpu-check: living beside real CUPTI (issue 29's exit, hand-over and signal
questions), each with a verdict:

- libcupti: the library every run of this check loaded (the traces' gprof.cupti_library) and its
  version (the file it resolves to: libcupti.so.<version>). FAIL when a run that collected GPU
  records names none; WARN when runs loaded different ones.
- torch.profiler inside gprof-run: the kernels launched after the program's profiler block (the
  block's end time and the launch count come from torch_inside.py's own line) must be in
  gprof-run's trace, and every kernel on the host clock (between the program's own first and
  last time.time_ns(), give or take 1 s): FAIL otherwise.
- SIGTERM mid-run: the service example gets SIGTERM through gprof-run; the launcher must be gone
  with a dump written within 5 s (torchrun's and Slurm's grace periods): FAIL otherwise.
- fork: a CUDA parent forks a DataLoader-style child that exits (torch_fork.py): both exit 0,
  the parent's dump has kernels, the child writes none (fork children without exec are inert).
"""

import os
import re
import signal
import subprocess
import time

from kineto_trace import Trace
from report import FAIL, PASS, SKIP, WARN
from runner import find_outputs
import torch_compare

HERE = os.path.dirname(os.path.abspath(__file__))
SIGTERM_LIMIT_S = 5.0
AFTER_RE = re.compile(r"torch_inside: start_ns=(\d+) after_stop_ns=(\d+) after_launches=(\d+) "
                      r"end_ns=(\d+)")
CLOCK_SLACK_NS = 1_000_000_000  # the program's own clock reads bracket its kernels, give or take


def cupti_version(path):
    """The version in the file name libcupti resolves to ("13.0.85" for libcupti.so.13.0.85),
    or "" when the name carries none."""
    name = os.path.basename(os.path.realpath(path)) if path else ""
    m = re.search(r"\.so\.([\d.]+)$", name)
    return m.group(1) if m else ""


def judge_libcupti(runs):
    """runs: [(label, cupti_library, version, kernels)] -> [(status, text)]."""
    checks, seen = [], set()
    for label, lib, version, kernels in runs:
        if not lib:
            checks.append((FAIL if kernels else WARN,
                           f"{label}: no libcupti named in its trace ({kernels} kernels)"))
            continue
        seen.add(lib)
        checks.append((PASS, f"{label}: {lib} (version {version or 'not in the file name'})"))
    if len(seen) > 1:
        checks.append((WARN, f"the runs loaded {len(seen)} different libcupti: {sorted(seen)}"))
    return checks


def judge_after_own_profiler(base_ns, end_ns, after_stop_ns, expected, kernel_starts_ns):
    """The kernels gprof-run recorded after the program's profiler block: at least `expected`
    (the program's own launch count), every kernel on the host clock."""
    checks = []
    off = [t for t in kernel_starts_ns if t < base_ns or t > end_ns]
    checks.append((FAIL if off else PASS,
                   f"{len(off)} of {len(kernel_starts_ns)} kernels off the host clock "
                   f"(outside the run's {base_ns}..{end_ns} ns)"))
    after = sum(1 for t in kernel_starts_ns if t >= after_stop_ns)
    checks.append((PASS if after >= expected else FAIL,
                   f"{after} kernels after the program's profiler stopped (it launched "
                   f"{expected} there)"))
    return checks


def judge_sigterm(seconds, exited, dumps):
    ok = exited and seconds <= SIGTERM_LIMIT_S and dumps > 0
    return [(PASS if ok else FAIL,
             f"SIGTERM mid-run: gprof-run {'exited' if exited else 'had not exited'} after "
             f"{seconds:.1f} s (limit {SIGTERM_LIMIT_S:.0f} s) with {dumps} dump(s)")]


def judge_fork(returncode, done, parent_kernels, dumps):
    ok = returncode == 0 and done and parent_kernels > 0 and dumps == 1
    return [(PASS if ok else FAIL,
             f"fork: exit {returncode}, {'done' if done else 'no GPROF_EXAMPLE_DONE'}, the "
             f"parent's dump has {parent_kernels} kernels, {dumps} dump(s) in all (1 expected: "
             f"the child is inert)")]


def _trace(path):
    try:
        return Trace(path) if path else None
    except (OSError, ValueError):
        return None


def _kernel_starts_ns(t):
    base = int(t.doc.get("baseTimeNanoseconds", 0)) if isinstance(t.doc, dict) else 0
    return base, [base + int(float(e["ts"]) * 1000) for e in t.gpu if e.get("cat") == "kernel"]


def run_sigterm(runner, section):
    out = os.path.join(runner.work_dir, "sigterm")
    stop = os.path.join(runner.work_dir, "sigterm.stop")
    argv = [runner.launcher, "-q", "-o", out, "--", runner.bin("service"), stop, "200"]
    p = subprocess.Popen(argv, env=runner.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3)
    sent = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        p.communicate(timeout=20)
        exited = True
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        exited = False
    seconds = time.monotonic() - sent
    _, _, _, dumps = find_outputs(out)
    for st, msg in judge_sigterm(seconds, exited, len(dumps)):
        section.status(st, msg)


def run(runner, section, python, inside_result=None):
    """inside_result: step 7's RunResult of torch_inside.py (None: not run)."""
    runs = []
    for label in sorted(os.listdir(runner.work_dir)) if os.path.isdir(runner.work_dir) else []:
        _, trace, _, _ = find_outputs(os.path.join(runner.work_dir, label))
        t = _trace(trace)
        if t is not None:
            lib = t.gprof.get("cupti_library", "") if isinstance(t.gprof, dict) else ""
            runs.append((label, lib, cupti_version(lib), t.count("kernel")))
    for st, msg in judge_libcupti(runs) or [(WARN, "no trace to read a libcupti from")]:
        section.status(st, msg)
    if inside_result is not None:
        m = AFTER_RE.search(inside_result.stdout)
        t = _trace(inside_result.trace)
        if m is None or t is None:
            section.status(FAIL, "torch_inside.py printed no after_stop_ns line or left no trace")
        else:
            start, after_stop, launches, end = (int(g) for g in m.groups())
            _, starts = _kernel_starts_ns(t)
            for st, msg in judge_after_own_profiler(start - CLOCK_SLACK_NS, end + CLOCK_SLACK_NS,
                                                    after_stop, launches, starts):
                section.status(st, msg)
    run_sigterm(runner, section)
    status, _ = torch_compare.torch_status(runner, python)
    if status != "ok":
        section.status(SKIP if runner.standin else FAIL, "fork check skipped: no torch with CUDA")
        return
    r = runner.profile("torch-fork", [python, os.path.join(HERE, "torch_fork.py")], timeout_s=90)
    t = _trace(r.trace)
    for st, msg in judge_fork(r.returncode, "GPROF_EXAMPLE_DONE torch_fork" in r.stdout,
                              t.count("kernel") if t else 0, len(r.dumps)):
        section.status(st, msg)
