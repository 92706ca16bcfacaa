"""Step 2c of scripts/gpu-check: copies that move nothing on the GPU.

Whether CUPTI writes a MEMCPY/MEMSET record for a 0-byte cudaMemcpy, a 0-byte cudaMemsetAsync or
a cudaMemcpyHostToHost copy is not documented (tests/cudasim/README.md, "Copies that move
nothing"). gprof-run's windows do not wait for such calls either way. The check runs
`calls_without_records empty-copies 3` (each of 3 steps: 2 work kernels, a 0-byte cudaMemcpy, a
0-byte cudaMemsetAsync, a 64-byte host-to-host cudaMemcpy, a step_end kernel) twice:

- the whole run: records what CUPTI did for each kind of call, by correlation id (the finding the
  stand-in's CUDASIM_EMPTY_COPY_RECORDS knob should then follow). Verdict: PASS when each kind
  got a record for all 3 calls or for none (the finding is stated), WARN when only some did
  (CUPTI is not consistent: the stand-in's knob cannot model it), FAIL when a kernel is missing.
- one window per step (`--step kernel:step_end`): every window holds its 3 kernels and none is
  held waiting for these calls' records ("never got a GPU record" in the info log). FAIL
  otherwise.
"""

import os

from kineto_trace import Trace, correlation
from report import FAIL, PASS, WARN
from windows_check import window_traces

STEPS = 3
KERNELS_PER_STEP = 3


def program_path(runner):
    return os.path.join(runner.build_dir, "tests", "collection", "calls_without_records")


def records_by_call(host_api, gpu_by_corr):
    """{kind: (calls, calls with a record)} for the program's calls that move nothing.
    `host_api`: the trace's API events in time order; the program's cudaMemcpy calls alternate
    0-byte (first) and host-to-host (second)."""
    out = {"0-byte cudaMemcpy": [0, 0], "host-to-host cudaMemcpy": [0, 0],
           "0-byte cudaMemsetAsync": [0, 0]}
    memcpys = 0
    for e in host_api:
        name = e.get("name", "")
        if name.startswith("cudaMemcpy"):
            kind = "0-byte cudaMemcpy" if memcpys % 2 == 0 else "host-to-host cudaMemcpy"
            memcpys += 1
        elif name.startswith("cudaMemsetAsync"):
            kind = "0-byte cudaMemsetAsync"
        else:
            continue
        out[kind][0] += 1
        out[kind][1] += 1 if gpu_by_corr.get(correlation(e)) else 0
    return {k: tuple(v) for k, v in out.items()}


def judge_records(by_kind, kernels, expected_kernels):
    checks = [(PASS if kernels == expected_kernels else FAIL,
               f"{kernels} kernels recorded ({expected_kernels} launched)")]
    for kind, (calls, recorded) in sorted(by_kind.items()):
        if calls == 0:
            checks.append((FAIL, f"{kind}: no such call in the trace"))
        elif recorded in (0, calls):
            finding = "a record for each" if recorded else "no record"
            checks.append((PASS, f"{kind}: CUPTI writes {finding} ({recorded} of {calls})"))
        else:
            checks.append((WARN, f"{kind}: records for {recorded} of {calls} calls only"))
    return checks


def judge_windows(kernels_per_window, log):
    held = "never got a GPU record" in log
    full = kernels_per_window[:STEPS]
    ok = len(full) == STEPS and all(k == KERNELS_PER_STEP for k in full) and not held
    return [(PASS if ok else FAIL,
             f"one window per step: kernels per window {full} (expected {KERNELS_PER_STEP} "
             f"each), {'a window waited for a record' if held else 'no window waited'}")]


def run(runner, section):
    program = [program_path(runner), "empty-copies", str(STEPS)]
    if not os.path.exists(program[0]):
        section.status(FAIL, f"{program[0]} was not built")
        return
    r = runner.profile("no_record_copies", program, timeout_s=60)
    if not section.check(r.ok() and bool(r.trace), f"calls_without_records: gprof-run exited "
                         f"{r.returncode}" + ("" if r.trace else ", no trace")):
        section.add("```", r.tail(), "```", "")
        return
    t = Trace(r.trace)
    host = sorted(t.host_api, key=lambda e: float(e.get("ts", 0)))
    for st, msg in judge_records(records_by_call(host, t.gpu_by_corr), t.count("kernel"),
                                 STEPS * KERNELS_PER_STEP):
        section.status(st, msg)
    w = runner.profile("no_record_copies_windows", program, extra_env={"GPROF_LOG_LEVEL": "info"},
                       timeout_s=60, options=["--step", "kernel:step_end", "--wait", "0",
                                              "--warmup", "0", "--active", "1", "--repeat", "0"])
    kernels = []
    for _, _, _, path in window_traces(w.out_dir):
        try:
            kernels.append(Trace(path).count("kernel"))
        except (OSError, ValueError):
            kernels.append(-1)
    for st, msg in judge_windows(kernels, w.stdout + w.stderr):
        section.status(st, msg)

