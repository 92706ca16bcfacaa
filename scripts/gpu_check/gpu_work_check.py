"""Step 2b of scripts/gpu-check: GPU work that a profiler meets at its edges.

- Exit with kernels still queued: `busy_loop 200 1000 --no-sync` launches 200 kernels of 1 ms
  and exits at once. The exit flush polls CUPTI's default flush for up to 1 s before forcing, so
  the 200 ms of queued work should all arrive. Verdict: FAIL on any `cupti_errors` or when
  kernels + incomplete records < launches (work lost without a count); WARN when records came
  back incomplete (counted, but missing from the trace); else PASS.
- CUDA graphs made by stream capture: `graph_capture 5` captures 3 launches and replays the graph
  5 times. Verdict: 15 kernels; each correlates with a cudaGraphLaunch call and each replay has
  exactly its 3; every kernel has a graphNodeId (from `--export sqlite`); the 3 captured launches
  are not counted as launches without records (`gpu_launches_without_records` 0).
- A module unloaded before its buffer is parsed: `module_unload 10` loads PTX with
  cuModuleLoadData, launches its kernel 10 times with cuLaunchKernel, unloads the module, then
  launches 3 ordinary kernels. Verdict: exactly 10 kernels named `unload_kernel` and 3
  `after_unload_kernel(float*)`, no other name (a name read from the freed module would be
  garbage or another string).
On the stand-in there are no graphs, stream capture or run-time modules: those checks are
skipped there.
"""

import collections
import glob
import os
import sqlite3

from kineto_trace import Trace, correlation
from report import FAIL, PASS, SKIP, WARN

QUEUED = dict(launches=200, kernel_us=1000)
GRAPH = dict(replays=5, per_graph=3)


def judge_exit_queued(launched, kernels, counters):
    """[(status, text)] for a run that exited with `launched` kernels queued; `kernels`: kernel
    records in its trace; `counters`: the trace's loss counters (None: not written)."""
    errors = counters.get("cupti_errors")
    incomplete = counters.get("gpu_records_incomplete")
    out = [(PASS if errors == 0 else FAIL,
            "no cupti_errors at the exit flush" if errors == 0 else
            f"cupti_errors={errors} at the exit flush" if errors is not None else
            "cupti_errors not in the trace")]
    if incomplete is None:
        out.append((FAIL, "gpu_records_incomplete not in the trace"))
        return out
    accounted = kernels + incomplete
    if accounted < launched:
        out.append((FAIL, f"{launched - accounted} of {launched} queued kernels neither recorded "
                          f"nor counted ({kernels} recorded, {incomplete} incomplete)"))
    elif incomplete:
        out.append((WARN, f"{incomplete} of {launched} kernels came back incomplete (counted; "
                          f"missing from the trace), {kernels} recorded"))
    else:
        out.append((PASS, f"all {launched} queued kernels recorded, 0 incomplete"))
    return out


def judge_graph(replays, per_graph, graph_launches, kernels_by_corr, node_ids, without_records):
    """[(status, text)]: `graph_launches`: correlation ids of the cudaGraphLaunch calls;
    `kernels_by_corr`: {correlation: kernel count} of every kernel; `node_ids`: graphNodeId per
    kernel (None: no sqlite export); `without_records`: the trace's gpu_launches_without_records."""
    out = []
    total = sum(kernels_by_corr.values())
    want = replays * per_graph
    out.append((PASS if total == want else FAIL, f"{total} kernels, expected {want} "
                f"({replays} replays x {per_graph})"))
    outside = {c: n for c, n in kernels_by_corr.items() if c not in graph_launches}
    out.append((PASS if not outside else FAIL,
                "every kernel correlates with a cudaGraphLaunch" if not outside else
                f"{sum(outside.values())} kernels correlate with no cudaGraphLaunch"))
    per = [kernels_by_corr.get(c, 0) for c in sorted(graph_launches)]
    out.append((PASS if len(per) == replays and all(n == per_graph for n in per) else FAIL,
                f"kernels per cudaGraphLaunch: {per} (expected {replays} x {per_graph})"))
    if node_ids is None:
        out.append((WARN, "graphNodeId not checked (no sqlite export)"))
    else:
        missing = sum(1 for n in node_ids if not n)
        out.append((PASS if node_ids and not missing else FAIL,
                    f"graphNodeId on {len(node_ids) - missing} of {len(node_ids)} kernels"))
    out.append((PASS if without_records == 0 else FAIL,
                "captured launches not counted as launches without records"
                if without_records == 0 else
                f"gpu_launches_without_records={without_records} (captured launches counted?)"))
    return out


def judge_module_unload(names, launches, after=3):
    """[(status, text)]: `names`: Counter of the trace's kernel names."""
    want = collections.Counter({"unload_kernel": launches, "after_unload_kernel(float*)": after})
    other = {n: c for n, c in names.items() if n not in want}
    ok = names == want
    text = (f"kernel names after cuModuleUnload: unload_kernel x{names.get('unload_kernel', 0)} "
            f"(expected {launches}), after_unload_kernel x"
            f"{names.get('after_unload_kernel(float*)', 0)} (expected {after})")
    if other:
        text += "; other names: " + ", ".join(f"{n[:40]!r} x{c}" for n, c in sorted(other.items()))
    return [(PASS if ok else FAIL, text)]


def _apply(section, label, checks):
    for st, text in checks:
        section.status(st, f"{label}: {text}")


def run_exit_queued(runner, section):
    program = [runner.bin("busy_loop"), str(QUEUED["launches"]), str(QUEUED["kernel_us"]),
               "--no-sync"]
    if not os.path.exists(program[0]):
        section.status(FAIL, f"{program[0]} was not built")
        return
    extra = {"CUDASIM_KERNEL_NS": f"spin={QUEUED['kernel_us'] * 1000}",
             "CUDASIM_LAUNCH_API_NS": "0"} if runner.standin else None
    r = runner.profile("exit_queued", program, extra_env=extra, timeout_s=60)
    section.add("`gprof-run busy_loop 200 1000 --no-sync` — exits with ~200 ms of kernels queued",
                "")
    if not section.check(r.ok() and bool(r.trace), f"exit with kernels queued: gprof-run exited "
                         f"{r.returncode}" + ("" if r.trace else ", no trace")):
        section.add("```", r.tail(), "```", "")
        return
    t = Trace(r.trace)
    counters = {n: t.counter(n) for n in ("cupti_errors", "gpu_records_incomplete")}
    _apply(section, "exit with kernels queued",
           judge_exit_queued(QUEUED["launches"], t.count("kernel"), counters))


def run_graphs(runner, section):
    # The stand-in captures and replays graphs as CUDA and CUPTI do (tests/cudasim/README.md,
    # "Stream capture and graphs"): the same verdicts on both.
    program = [runner.bin("graph_capture"), str(GRAPH["replays"])]
    if not os.path.exists(program[0]):
        section.status(FAIL, f"{program[0]} was not built")
        return
    r = runner.profile("graph_capture", program, options=["--export", "sqlite"], timeout_s=60)
    if not section.check(r.ok() and bool(r.trace), f"graph_capture: gprof-run exited "
                         f"{r.returncode}" + ("" if r.trace else ", no trace")):
        section.add("```", r.tail(), "```", "")
        return
    t = Trace(r.trace)
    launches = {correlation(e) for e in t.host_api if "GraphLaunch" in e.get("name", "")}
    by_corr = collections.Counter(correlation(e) for e in t.gpu if e.get("cat") == "kernel")
    node_ids = None
    dbs = glob.glob(os.path.join(r.out_dir, "*.sqlite"))
    if dbs:
        with sqlite3.connect(dbs[0]) as db:
            node_ids = [row[0] for row in
                        db.execute("SELECT graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    _apply(section, "graph_capture", judge_graph(
        GRAPH["replays"], GRAPH["per_graph"], launches, by_corr, node_ids,
        t.counter("gpu_launches_without_records") or 0))


def run_module_unload(runner, section):
    if runner.standin:
        section.status(SKIP, "cuModuleUnload before parsing: the stand-in loads no modules")
        return
    program = [runner.bin("module_unload"), "10"]
    if not os.path.exists(program[0]):
        section.status(FAIL, f"{program[0]} was not built")
        return
    r = runner.profile("module_unload", program, timeout_s=60)
    if not section.check(r.ok() and bool(r.trace), f"module_unload: gprof-run exited "
                         f"{r.returncode}" + ("" if r.trace else ", no trace")):
        section.add("```", r.tail(), "```", "")
        return
    _apply(section, "module_unload", judge_module_unload(Trace(r.trace).kernel_counts(), 10))
