"""Step 6 of scripts/gpu-check: gprof-run against torch.profiler on one PyTorch training loop.

Four separate runs of torch_loop.py: plain, under gprof-run, and twice under torch.profiler (the
reference). torch.profiler can itself lose kernels (Kineto's timestamp callback on CUPTI 13.0
drops kernels at session start), so its runs use a schedule with warm-up steps that take those
losses, and the reference is checked against itself before gprof-run is judged against it:
  - reference vs reference, per step: the multisets of kernel names of the two torch.profiler
    runs; a disagreement is a WARN about the reference (it lost kernels), not a FAIL
  - gprof-run vs reference, per step: the reference of a step is the larger of the two runs'
    multisets (a loss only removes kernels). FAIL when gprof-run lacks kernels the reference has;
    WARN (a short reference) when gprof-run has more and its step equals its other steps (the
    loop is deterministic); FAIL when gprof-run has more and its step differs from its others
  - per kernel name, the mean GPU time per launch over the measured steps, across the three
    profiled processes: gprof-run within TOLERANCE (10%) of the mean of the two references, for
    kernels whose reference total is at least MIN_JUDGED_US (a few hundred ns of jitter is more
    than 10% of a tiny kernel); a kernel whose two references differ by more than TOLERANCE is
    not judged (a WARN names them)
  - wall-time overhead of each tool against the plain run (reported; WARN above +10% per step)
"""

import collections
import json
import os
import statistics

from kineto_trace import Trace
from report import FAIL, PASS, SKIP, WARN

TOLERANCE = 0.10
MIN_JUDGED_US = 10.0
REF_WARMUP = 3
LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_loop.py")


_torch_status_cache = {}


def torch_status(runner, python):
    """("ok", text) when torch with CUDA works, else ("no-torch" | "no-cuda", text). Asked once
    per Python (importing torch takes seconds; steps 6-8 all ask)."""
    key = (python, runner.standin, runner.build_dir)
    if key not in _torch_status_cache:
        _torch_status_cache[key] = _torch_status(runner, python)
    return _torch_status_cache[key]


def _torch_status(runner, python):
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


def run_loop(runner, python, mode, workload, extra_args, run_tag="", timeout_s=150):
    """Runs torch_loop.py once; returns (RunResult, results dict or None, torch trace path)."""
    tag = f"{workload}-{mode}{run_tag}"
    result = os.path.join(runner.work_dir, f"torch-{tag}.result.json")
    trace = os.path.join(runner.work_dir, f"torch-{tag}.pt.trace.json")
    argv = [python, LOOP, "--mode", mode, "--workload", workload, "--result", result] + extra_args
    if mode == "torch":
        argv += ["--trace", trace, "--ref-warmup", str(REF_WARMUP)]
    if mode == "gprof":
        r = runner.profile(f"torch-{tag}", argv, timeout_s=timeout_s)
    else:
        r = runner.run(argv, timeout_s=timeout_s)
    data = None
    if r.ok() and os.path.exists(result):
        with open(result, encoding="utf-8") as f:
            data = json.load(f)
    return r, data, (trace if mode == "torch" else r.trace)


def _short(name, width=70):
    return name if len(name) <= width else name[:width - 3] + "..."


def _diff_text(a, b, name_a, name_b):
    only_a = list((a - b).items())[:3]
    only_b = list((b - a).items())[:3]
    return (f"{name_a} {sum(a.values())} kernels, {name_b} {sum(b.values())}; only in {name_a} "
            f"{[(_short(n, 50), c) for n, c in only_a]}, only in {name_b} "
            f"{[(_short(n, 50), c) for n, c in only_b]}")


def reference_agreement(ref_names, steps):
    """(status, text): do the torch.profiler runs agree with each other in every step?
    ref_names: [{step: Counter}] per reference run. PASS when they agree, WARN when not (the
    reference lost kernels; gprof-run is not failed for it), WARN with one run (not checked)."""
    want = range(steps)
    if len(ref_names) < 2:
        return WARN, ("only one torch.profiler run: the reference could not be checked against "
                      "itself")
    a, b = ref_names[0], ref_names[1]
    empty = collections.Counter()
    differ = [s for s in want if a.get(s, empty) != b.get(s, empty)]
    if not differ:
        per = sum(a.get(0, empty).values())
        return PASS, (f"the two torch.profiler runs agree with each other in all {steps} steps "
                      f"({per} kernels per step)")
    s = differ[0]
    return WARN, (f"the two torch.profiler runs disagree in {len(differ)}/{steps} steps (the "
                  "reference loses kernels; gprof-run is judged against the larger of the two "
                  f"per step) — first: step {s}: "
                  + _diff_text(a.get(s, empty), b.get(s, empty), "run 1", "run 2"))


def judge_kernel_sets(g_names, ref_names, steps):
    """[(status, text)]: gprof-run's per-step kernel multisets against the reference (the
    elementwise max of the torch.profiler runs). See the module doc for the rules."""
    want = list(range(steps))
    empty = collections.Counter()
    checks = []
    have = [s for s in want if g_names.get(s)]
    checks.append((PASS if len(have) == steps else FAIL,
                   f"gprof-run trace has kernels in all {steps} steps ProfilerStep#0..{steps - 1} "
                   f"(found {len(have)})"))
    ref = {}
    for s in want:
        m = collections.Counter()
        for r in ref_names:
            m |= r.get(s, empty)
        ref[s] = m
    ref_have = [s for s in want if ref[s]]
    if len(ref_have) < steps:
        checks.append((WARN, f"the torch.profiler reference has kernels in only "
                             f"{len(ref_have)}/{steps} steps (a short reference)"))
    # gprof-run's usual step: the most common multiset among its steps.
    shapes = collections.Counter(tuple(sorted(g_names.get(s, empty).items())) for s in want)
    usual = collections.Counter(dict(shapes.most_common(1)[0][0])) if shapes else empty
    same, missing, extra_ok, extra_bad = [], [], [], []
    for s in want:
        g, r = g_names.get(s, empty), ref[s]
        if g == r and g:
            same.append(s)
        elif r - g:
            missing.append(s)
        elif g - r:
            (extra_ok if g == usual else extra_bad).append(s)
        else:
            missing.append(s)  # both empty
    per_step = sum(usual.values())
    checks.append((PASS if len(same) == steps else FAIL if missing or extra_bad else WARN,
                   f"kernel names and counts match the reference in {len(same)}/{steps} steps "
                   f"({per_step} kernels per step in gprof-run)"))
    if missing:
        s = missing[0]
        checks.append((FAIL, f"gprof-run lacks kernels the reference has in {len(missing)} "
                             f"step(s) — first: step {s}: "
                             + _diff_text(g_names.get(s, empty), ref[s], "gprof-run",
                                          "torch.profiler")))
    if extra_bad:
        s = extra_bad[0]
        checks.append((FAIL, f"gprof-run has kernels that neither the reference nor its own "
                             f"other steps have in {len(extra_bad)} step(s) — first: step {s}: "
                             + _diff_text(g_names.get(s, empty), ref[s], "gprof-run",
                                          "torch.profiler")))
    if extra_ok:
        s = extra_ok[0]
        lost = sum(sum((g_names.get(x, empty) - ref[x]).values()) for x in extra_ok)
        checks.append((WARN, f"the torch.profiler reference is short by {lost} kernel(s) in "
                             f"{len(extra_ok)} step(s) that gprof-run has, as in its other steps "
                             f"(a reference loss, not a gprof-run failure) — first: step {s}: "
                             + _diff_text(g_names.get(s, empty), ref[s], "gprof-run",
                                          "torch.profiler")))
    return checks


def kernel_stats(names, times, steps):
    """{kernel: (launches, total us)} over steps 0..steps-1 of kernels_by_step's output."""
    out = collections.defaultdict(lambda: [0, 0.0])
    for s in range(steps):
        for n, c in names.get(s, {}).items():
            out[n][0] += c
        for n, us in times.get(s, {}).items():
            out[n][1] += us
    return {n: (c, us) for n, (c, us) in out.items()}


def judge_times(g_stats, ref_stats):
    """(rows, [(status, text)]): per kernel, the mean GPU us per launch of gprof-run against the
    mean of the torch.profiler runs' means (module doc)."""
    def mean(st, n):
        c, us = st.get(n, (0, 0.0))
        return us / c if c else None

    rows, judged, bad, ref_jitter = [], 0, [], []
    names = set(g_stats)
    for r in ref_stats:
        names |= set(r)
    order = sorted(names, key=lambda n: -max([r.get(n, (0, 0.0))[1] for r in ref_stats] or [0]))
    for n in order:
        g = mean(g_stats, n)
        refs = [m for m in (mean(r, n) for r in ref_stats) if m is not None]
        ref = statistics.mean(refs) if refs else None
        total = max([r.get(n, (0, 0.0))[1] for r in ref_stats] or [0.0])
        spread = (max(refs) - min(refs)) / ref if len(refs) > 1 and ref else 0.0
        judge = total >= MIN_JUDGED_US and ref is not None
        verdict = "no (tiny)" if not judge else ""
        if judge and spread > TOLERANCE:
            judge = False
            ref_jitter.append((n, spread))
            verdict = "no (references differ)"
        rel = (g - ref) / ref if g is not None and ref else None
        if judge:
            judged += 1
            verdict = "yes"
            if rel is None or abs(rel) > TOLERANCE:
                bad.append((n, rel))
        rows.append([f"`{_short(n)}`", g_stats.get(n, (0, 0.0))[0],
                     "-" if g is None else f"{g:.2f}",
                     " / ".join(f"{m:.2f}" for m in refs) or "-",
                     f"{100 * rel:+.1f}%" if rel is not None else "n/a",
                     f"{100 * spread:.1f}%" if len(refs) > 1 else "-", verdict])
    checks = [(FAIL if bad else PASS,
               f"per-kernel GPU time per launch within {TOLERANCE:.0%} of the reference for "
               f"{judged - len(bad)}/{judged} kernels with >= {MIN_JUDGED_US:g} us in total"
               + (" — worst: " + str([(_short(n, 50), "missing" if r is None else
                                      f"{100 * r:+.1f}%")
                                     for n, r in sorted(bad, key=lambda x: -abs(x[1] or 9e9))[:3]])
                  if bad else ""))]
    if ref_jitter:
        checks.append((WARN, f"{len(ref_jitter)} kernel(s) not judged: the two torch.profiler "
                             f"runs differ by more than {TOLERANCE:.0%} — "
                             + str([(_short(n, 50), f"{100 * sp:.1f}%")
                                    for n, sp in sorted(ref_jitter, key=lambda x: -x[1])[:3]])))
    return rows, checks


def compare_steps(section, g, refs, steps):
    """Per-step kernel multisets of gprof-run's trace against the reference traces (1 or 2).
    Returns (gprof-run stats, [reference stats]) for compare_times."""
    g_names, g_times, _ = g.kernels_by_step()
    ref_data = [t.kernels_by_step() for t in refs]
    ref_names = [d[0] for d in ref_data]
    section.status(*reference_agreement(ref_names, steps))
    for st, text in judge_kernel_sets(g_names, ref_names, steps):
        section.status(st, text)
    return (kernel_stats(g_names, g_times, steps),
            [kernel_stats(n, t, steps) for n, t, _ in ref_data])


def compare_times(section, g_stats, ref_stats):
    rows, checks = judge_times(g_stats, ref_stats)
    for st, text in checks:
        section.status(st, text)
    ga = sum(us for _, us in g_stats.values())
    tb = [sum(us for _, us in r.values()) for r in ref_stats]
    section.add("Total kernel time over the measured steps: gprof-run "
                f"{ga:.1f} us, torch.profiler " + " / ".join(f"{x:.1f}" for x in tb) + " us.", "")
    section.table(["kernel", "launches", "gprof-run us/launch", "torch.profiler us/launch",
                   "diff vs ref mean", "ref spread", "judged"], rows[:20])
    if len(rows) > 20:
        section.add(f"({len(rows) - 20} more kernels not shown.)", "")


def overhead_rows(results):
    """Rows of median step time and process wall time per mode, with overhead vs plain."""
    plain = results.get("plain")
    rows = []
    for mode, label in (("plain", "unprofiled"), ("gprof", "gprof-run"),
                        ("torch", "torch.profiler"), ("torch2", "torch.profiler (2nd run)")):
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
                f"{warmup} unprofiled warm-up steps (torch.profiler runs: {REF_WARMUP} more "
                "profiled warm-up steps of its schedule, discarded).", "")
    args = ["--steps", str(steps), "--warmup", str(warmup)]
    results = {}
    traces = {}
    for mode, run_tag in (("plain", ""), ("gprof", ""), ("torch", ""), ("torch", "2")):
        key = mode + run_tag
        r, data, trace = run_loop(runner, python, mode, "train", args, run_tag=run_tag)
        ok = section.check(data is not None and r.ok(),
                           f"training loop, {key} run exited {r.returncode}"
                           + (" (timed out)" if r.timed_out else ""),
                           status_if_bad=WARN if key == "torch2" else FAIL)
        if not ok:
            section.add(f"{key} run output (tail):", "", "```", r.tail(), "```", "")
            continue
        results[key] = (data, r)
        traces[key] = trace
    if "gprof" in traces:
        section.check(bool(traces["gprof"]), "gprof-run wrote a trace for the training loop")
        if traces["gprof"]:
            c = runner.check_trace(results["gprof"][1].traces)
            section.check(c.ok(), f"`gprof-run check` on the training-loop trace exited "
                          f"{c.returncode}" + ("" if c.ok() else f": {c.tail(4)}"))
    refs = []
    for key in ("torch", "torch2"):
        if key in traces:
            if os.path.exists(traces[key]):
                refs.append(Trace(traces[key]))
            else:
                section.status(FAIL if key == "torch" else WARN,
                               f"torch.profiler ({key}) wrote no trace ({traces[key]})")
    if traces.get("gprof") and refs:
        g = Trace(traces["gprof"])
        lost = {k: v for k, v in g.loss_counters().items() if v}
        section.check(not lost, "gprof-run lost no records in the training loop"
                      + (f": {lost}" if lost else ""))
        g_stats, ref_stats = compare_steps(section, g, refs, steps)
        compare_times(section, g_stats, ref_stats)
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
