"""Step 2 of scripts/gpu-check: profile the CUDA examples and check their traces.

For each example: it exits 0 and prints `GPROF_EXAMPLE_DONE <name>`; gprof-run wrote trace.json
and `gprof-run check` accepts it; no record was lost (the loss counters of the trace's "gprof"
object are all zero); every kernel and copy the example launched is present (the counts the
example prints as `kernels=N copies=M`, or else counts derived from its arguments); every GPU
record correlates with exactly one API call and every launch/copy/memset call with its GPU work.
"""

import os
import re

from report import FAIL, PASS, SKIP, WARN
from kineto_trace import Trace

# name, argv (program first), the name the example prints in GPROF_EXAMPLE_DONE
CASES = [
    ("matmul_bias 64", ["matmul_bias", "64"], "matmul_bias"),
    ("matmul_bias 4096", ["matmul_bias", "4096"], "matmul_bias"),
    ("launch_loop 20000", ["launch_loop", "20000"], "launch_loop"),
    ("multistream", ["multistream"], "multistream"),
    ("multithread", ["multithread"], "multithread"),
    ("driver_launch 3", ["driver_launch", "3"], "driver_launch"),
    ("eager_ops 2000", ["eager_ops", "2000"], "eager_ops"),
    # nvcc's default static cudart, as most shipped binaries (skipped on the stand-in)
    ("launch_loop_static 20000", ["launch_loop_static", "20000"], "launch_loop"),
]
STANDIN_SKIP = {"launch_loop_static": "a static cudart cannot be replaced by the stand-in's"}

_COUNT_RE = {k: re.compile(rf"\b{k}=(\d+)\b") for k in ("kernels", "copies", "memsets")}


def expected_counts(stdout, argv):
    """{'kernels': N, 'copies': M[, 'memsets': K]} and where they came from, or ({}, why)."""
    found = {}
    for k, rx in _COUNT_RE.items():
        m = rx.findall(stdout)
        if m:
            found[k] = sum(int(x) for x in m)  # multithread may print one line per thread
    if "kernels" in found:
        return found, "printed by the example"
    derived = derive_counts(argv)
    if derived:
        return derived, "derived from the example's arguments"
    return {}, "the example does not print kernels=N copies=M"


def derive_counts(argv):
    """Counts computed from the example sources (examples/cuda/*.cu, read at commit 42b2287)
    for examples that do not print them. Empty when unknown. Keep in step with the sources."""
    name, args = argv[0], [int(a) for a in argv[1:]]
    if name == "matmul_bias":      # per step: matmul + bias_add; 3 HtoD + 1 DtoH copies
        steps = args[1] if len(args) > 1 else 10
        return {"kernels": 2 * steps, "copies": 4, "memsets": 0}
    if name == "launch_loop":      # N tiny kernels, one memset, one DtoH copy
        return {"kernels": args[0], "copies": 1, "memsets": 1}
    if name == "multistream":      # 4 streams x (HtoD, kernel, DtoH) + a pageable HtoD, a memset
        return {"kernels": 4, "copies": 9, "memsets": 1}
    if name == "multithread":      # per thread: a memset, `launches` kernels, a DtoH copy
        threads = args[0] if args else 4
        launches = args[1] if len(args) > 1 else 50
        return {"kernels": threads * launches, "copies": threads, "memsets": threads}
    return {}


def judge_devices(doc):
    """(status, text): a trace without deviceProperties has no GPU names, SM counts or clocks for
    HTA and the table's device rows: a FAIL, not a detail."""
    devices = doc.get("deviceProperties") if isinstance(doc, dict) else None
    if not devices:
        return FAIL, "no deviceProperties in the trace"
    return PASS, "deviceProperties: " + ", ".join(str(d.get("name", "?")) for d in devices)


def check_example(runner, section, label, argv, done_name):
    if runner.standin and argv[0] in STANDIN_SKIP:
        section.status(SKIP, f"`{label}`: {STANDIN_SKIP[argv[0]]}")
        return None
    program = [runner.bin(argv[0])] + argv[1:]
    if not os.path.exists(program[0]):
        section.status(FAIL, f"`{label}`: {program[0]} was not built")
        return None
    r = runner.profile(re.sub(r"\W+", "_", label), program, timeout_s=90)
    row = {"case": label, "seconds": r.seconds, "trace": r.trace}
    ok = section.check(r.ok(), f"`{label}`: gprof-run exited {r.returncode}"
                       + (" (timed out)" if r.timed_out else ""))
    if not ok:
        section.add(f"`{label}` output (tail):", "", "```", r.tail(), "```", "")
    section.check(f"GPROF_EXAMPLE_DONE {done_name}" in r.stdout,
                  f"`{label}`: the example printed GPROF_EXAMPLE_DONE {done_name}")
    if not section.check(bool(r.trace), f"`{label}`: trace.json written"
                         + (f" ({os.path.relpath(r.trace, runner.work_dir)})" if r.trace else "")):
        return row
    c = runner.check_trace(r.traces)
    section.check(c.ok(), f"`{label}`: `gprof-run check` passes on {len(r.traces)} trace(s), "
                  f"exit {c.returncode}" + ("" if c.ok() else f": {c.tail(4)}"))
    try:
        t = Trace(r.trace)
    except (OSError, ValueError) as e:
        section.status(FAIL, f"`{label}`: trace.json does not parse: {e}")
        return row
    row.update(kernels=t.count("kernel"), copies=t.count("gpu_memcpy"),
               memsets=t.count("gpu_memset"), api=len(t.host_api),
               mib=os.path.getsize(r.trace) / 2**20)

    losses = t.loss_counters()
    if not t.gprof:
        section.status(FAIL, f"`{label}`: trace.json has no top-level \"gprof\" counters object")
    else:
        lost = {k: v for k, v in losses.items() if v}
        section.check(not lost, f"`{label}`: no records dropped or lost"
                      + (f": {lost}" if lost else f" ({len(losses)} loss counters, all 0)"))
    section.check(row["kernels"] > 0, f"`{label}`: {row['kernels']} kernels recorded")
    st, text = judge_devices(t.doc)
    section.status(st, f"`{label}`: {text}")

    expected, source = expected_counts(r.stdout, argv)
    if expected:
        for key, got in (("kernels", row["kernels"]), ("copies", row["copies"]),
                         ("memsets", row["memsets"])):
            if key in expected:
                section.check(got == expected[key], f"`{label}`: {key} {got}, expected "
                              f"{expected[key]} ({source})")
    else:
        section.status(WARN, f"`{label}`: expected counts unknown ({source}); presence is "
                             "checked through correlation only")

    bad, problems = t.correlation_problems()
    section.check(bad == 0, f"`{label}`: every GPU record correlates with exactly one API call "
                  "and every launch/copy/memset call with its GPU work"
                  + (f" — {bad} problem(s): " + "; ".join(problems) if bad else ""))
    gpu_status = str(t.gprof.get("gpu_status", "?"))
    section.check(gpu_status == "collected", f"`{label}`: GPU collection status '{gpu_status}'")
    if not runner.standin:
        lib = str(t.gprof.get("cupti_library", ""))
        devices = ", ".join(str(d.get("name")) for d in t.doc.get("deviceProperties", []))
        section.check("cudasim" not in lib + devices, f"`{label}`: real CUPTI and GPU used "
                      f"({lib or 'no cupti_library in trace'}; {devices or 'no devices'})")
    return row


def run(runner, section):
    rows = []
    for label, argv, done in CASES:
        row = check_example(runner, section, label, argv, done)
        if row:
            rows.append(row)
    if rows:
        section.table(["example", "kernels", "copies", "memsets", "API calls", "trace MiB",
                       "seconds"],
                      [[r["case"], r.get("kernels", "-"), r.get("copies", "-"),
                        r.get("memsets", "-"), r.get("api", "-"),
                        f"{r['mib']:.2f}" if "mib" in r else "-", f"{r['seconds']:.2f}"]
                       for r in rows])
    return rows

