"""Step 3 of scripts/gpu-check: gprof-run against torch.profiler on one PyTorch training loop.

Three separate runs of torch_loop.py (plain, under gprof-run, under torch.profiler). Compared:
  - per step, the multiset of kernel names (must be equal for every step)
  - per kernel name, the GPU time summed over the measured steps (must agree within 5%; kernels
    whose torch.profiler total is under MIN_JUDGED_US are listed but not judged, because run-to-run
    jitter of a few hundred ns is more than 5% of them)
  - wall-time overhead of each tool against the plain run (reported, not judged)
"""

import collections
import json
import os
import statistics

from kineto_trace import Trace
from report import FAIL, PASS, SKIP, WARN

TOLERANCE = 0.05
MIN_JUDGED_US = 10.0
LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_loop.py")


def torch_status(runner, python):
    """("ok", text) when torch with CUDA works, else ("no-torch" | "no-cuda", text)."""
    probe = ("import sys\ntry:\n import torch\nexcept Exception as e:\n print(e); sys.exit(5)\n"
             "print(torch.__version__, torch.version.cuda)\n"
             "sys.exit(0 if torch.cuda.is_available() else 4)\n")
    r = runner.run([python, "-c", probe], timeout_s=120)
    text = r.tail(2)
    if r.returncode == 0:
        return "ok", text
    if r.returncode == 4:
        return "no-cuda", f"torch {text} but torch.cuda.is_available() is False"
    return "no-torch", text or "torch not importable"


def run_loop(runner, python, mode, workload, extra_args):
    """Runs torch_loop.py once; returns (RunResult, results dict or None, torch trace path)."""
    tag = f"{workload}-{mode}"
    result = os.path.join(runner.work_dir, f"torch-{tag}.result.json")
    trace = os.path.join(runner.work_dir, f"torch-{tag}.pt.trace.json")
    argv = [python, LOOP, "--mode", mode, "--workload", workload, "--result", result] + extra_args
    if mode == "torch":
        argv += ["--trace", trace]
    if mode == "gprof":
        r = runner.profile(f"torch-{tag}", argv)
    else:
        r = runner.run(argv)
    data = None
    if r.ok() and os.path.exists(result):
        with open(result, encoding="utf-8") as f:
            data = json.load(f)
    return r, data, (trace if mode == "torch" else r.trace)


def _short(name, width=70):
    return name if len(name) <= width else name[:width - 3] + "..."


def compare_steps(section, g, t, steps):
    """Per-step kernel multisets. Returns the per-step data of both traces."""
    g_names, g_times, _ = g.kernels_by_step()
    t_names, t_times, _ = t.kernels_by_step()
    want = set(range(steps))
    section.check(set(g_names) == want, f"gprof-run trace has kernels in all {steps} steps "
                  f"ProfilerStep#0..{steps - 1} (found {len(set(g_names) & want)})")
    section.check(set(t_names) == want, f"torch.profiler trace has kernels in all {steps} steps "
                  f"(found {len(set(t_names) & want)})")
    same = [s for s in sorted(want) if g_names.get(s) == t_names.get(s) and g_names.get(s)]
    diff_text = ""
    for s in sorted(want):
        if s not in same:
            a, b = g_names.get(s, collections.Counter()), t_names.get(s, collections.Counter())
            only_g = list((a - b).items())[:3]
            only_t = list((b - a).items())[:3]
            diff_text = (f" — first differing step {s}: gprof-run {sum(a.values())} kernels, "
                         f"torch.profiler {sum(b.values())}; only in gprof-run "
                         f"{[(_short(n, 50), c) for n, c in only_g]}, only in torch.profiler "
                         f"{[(_short(n, 50), c) for n, c in only_t]}")
            break
    per_step = sum(t_names.get(0, collections.Counter()).values())
    section.check(len(same) == steps, f"kernel names and counts match in {len(same)}/{steps} "
                  f"steps ({per_step} kernels per step){diff_text}")
    return g_times, t_times


def compare_times(section, g_times, t_times):
    g_tot, t_tot = collections.defaultdict(float), collections.defaultdict(float)
    counts = collections.Counter()
    for per in g_times.values():
        for n, us in per.items():
            g_tot[n] += us
    for per in t_times.values():
        for n, us in per.items():
            t_tot[n] += us
            counts[n] += 1
    rows, judged, bad = [], 0, []
    for n in sorted(set(g_tot) | set(t_tot), key=lambda k: -t_tot.get(k, 0.0)):
        a, b = g_tot.get(n, 0.0), t_tot.get(n, 0.0)
        rel = abs(a - b) / b if b > 0 else float("inf")
        judge = b >= MIN_JUDGED_US
        if judge:
            judged += 1
            if rel > TOLERANCE:
                bad.append((n, rel))
        rows.append([f"`{_short(n)}`", f"{a:.1f}", f"{b:.1f}",
                     f"{100 * (a - b) / b:+.1f}%" if b > 0 else "n/a", "yes" if judge else "no"])
    ga, tb = sum(g_tot.values()), sum(t_tot.values())
    section.check(not bad, f"per-kernel GPU time within {TOLERANCE:.0%} for {judged - len(bad)}"
                  f"/{judged} kernels with >= {MIN_JUDGED_US:g} us"
                  + (f" — worst: {[(_short(n, 50), f'{100 * r:.1f}%') for n, r in sorted(bad, key=lambda x: -x[1])[:3]]}"
                     if bad else ""))
    section.add(f"Total kernel time over the measured steps: gprof-run {ga:.1f} us, "
                f"torch.profiler {tb:.1f} us ({100 * (ga - tb) / tb:+.2f}%)." if tb else
                "No kernel time in the torch.profiler trace.", "")
    section.table(["kernel", "gprof-run us", "torch.profiler us", "diff", "judged"], rows[:20])
    if len(rows) > 20:
        section.add(f"({len(rows) - 20} more kernels not shown.)", "")


def overhead_rows(results):
    """Rows of median step time and process wall time per mode, with overhead vs plain."""
    plain = results.get("plain")
    rows = []
    for mode, label in (("plain", "unprofiled"), ("gprof", "gprof-run"),
                        ("torch", "torch.profiler")):
        res = results.get(mode)
        if not res:
            continue
        data, run = res
        med = statistics.median(data["step_seconds"]) * 1e3
        row = [label, f"{med:.3f}", f"{data['measured_seconds']:.3f}", f"{run.seconds:.2f}"]
        if plain and mode != "plain":
            p_med = statistics.median(plain[0]["step_seconds"]) * 1e3
            row += [f"{100 * (med / p_med - 1):+.1f}%",
                    f"{100 * (run.seconds / plain[1].seconds - 1):+.1f}%"]
        else:
            row += ["-", "-"]
        rows.append(row)
    return rows


def run(runner, section, python, steps=20, warmup=5):
    status, text = torch_status(runner, python)
    if status != "ok":
        why = "torch not importable" if status == "no-torch" else "torch has no CUDA device"
        if runner.standin:
            section.status(SKIP, f"skipped: {why} ({_short(text, 120)})")
        else:
            section.status(FAIL, f"{why} with `{python}`: {_short(text, 160)}")
        return
    section.add(f"torch: {text.splitlines()[-1] if text else '?'}; {steps} measured steps after "
                f"{warmup} warm-up steps.", "")
    args = ["--steps", str(steps), "--warmup", str(warmup)]
    results = {}
    traces = {}
    for mode in ("plain", "gprof", "torch"):
        r, data, trace = run_loop(runner, python, mode, "train", args)
        ok = section.check(data is not None and r.ok(),
                           f"training loop, {mode} run exited {r.returncode}")
        if not ok:
            section.add(f"{mode} run output (tail):", "", "```", r.tail(), "```", "")
            continue
        results[mode] = (data, r)
        traces[mode] = trace
    if "gprof" in traces:
        section.check(bool(traces["gprof"]), "gprof-run wrote a trace for the training loop")
        if traces["gprof"]:
            c = runner.check_trace(results["gprof"][1].traces)
            section.check(c.ok(), f"`gprof-run check` on the training-loop trace exited "
                          f"{c.returncode}" + ("" if c.ok() else f": {c.tail(4)}"))
    if traces.get("gprof") and traces.get("torch") and os.path.exists(traces["torch"]):
        g, t = Trace(traces["gprof"]), Trace(traces["torch"])
        lost = {k: v for k, v in g.loss_counters().items() if v}
        section.check(not lost, "gprof-run lost no records in the training loop"
                      + (f": {lost}" if lost else ""))
        g_times, t_times = compare_steps(section, g, t, steps)
        compare_times(section, g_times, t_times)
    elif "torch" in results and not os.path.exists(traces["torch"]):
        section.status(FAIL, f"torch.profiler wrote no trace ({traces['torch']})")
    rows = overhead_rows(results)
    if rows:
        section.add("Wall time (median step with a device synchronize at its end; measured "
                    "steps; whole process including start-up, trace writing and export):", "")
        section.table(["run", "median step ms", "measured s", "process s", "step overhead",
                       "process overhead"], rows)
    if all(m in results for m in ("plain", "gprof", "torch")):
        section.status(WARN if _step_overhead(results, "gprof") > 0.10 else PASS,
                       f"gprof-run step-time overhead {100 * _step_overhead(results, 'gprof'):+.1f}%"
                       f" vs torch.profiler {100 * _step_overhead(results, 'torch'):+.1f}%"
                       " (warning above +10%)")


def _step_overhead(results, mode):
    p = statistics.median(results["plain"][0]["step_seconds"])
    return statistics.median(results[mode][0]["step_seconds"]) / p - 1
