"""Step 9 of scripts/gpu-check: torch op rows on a real GPU, the seeds' matmul+add (issue 12).

torch_matmul_add.py at --size 64 and 4096, each twice in its own process: under
`gprof-run --step 'nvtx:matmul_add*' --wait W --warmup 0 --active I --repeat 1` (each
record_function("matmul_add") call begins a step: the W warm-up calls are wait steps, the I
compared calls the one window, and the call after them ends it), and under torch.profiler (CPU +
CUDA activities) around the same I calls. gprof-run's window table
(`*.cycle0.steps<W>-<W+I-1>.table.txt`) is parsed (parse_table: column bounds from the dashed
separator line) and judged against torch's key_averages() rows (judge):

FAIL (what a torch.profiler user reads off the table, not timing):
  - no window table; a row missing of aten::matmul, aten::mm, aten::add, matmul_add
  - a call count that differs from torch.profiler's (or from I where torch's run gave none)
  - aten::mm's Self CUDA is 0 (its kernel's time went to no op, or to another)
  - the ops' Self CUDA do not add up to "Self CUDA time total" (the device rows' sum) within
    SUM_TOLERANCE or the print rounding of the cells summed: both sides are the same kernel
    records, so a difference means a kernel owned by no op or by two
  - aten::matmul has Self CUDA where torch gives it none, or a CUDA total below aten::mm's Self
    CUDA (its CUDA total includes the kernels of the ops nested in it)
WARN (timing: GPU and CPU times differ from run to run and from tool to tool):
  - a Self CUDA / CUDA total of ours further than TIME_TOLERANCE (or TIME_SLACK_US, whichever is
    larger) from torch.profiler's figure
  - the article's verdict missed: at 64 Self CUDA time total >= 10% of Self CPU time total (not
    overhead-bound), at 4096 <= 50% (not compute-bound); torch's ratio is shown beside ours
  - a window marked partial, or loss counters in the table's notes
"""

import glob
import json
import os
import re

from report import FAIL, PASS, SKIP, WARN
import torch_compare

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_matmul_add.py")
SIZES = (64, 4096)
OPS = ("matmul_add", "aten::matmul", "aten::mm", "aten::add")
SUM_TOLERANCE = 0.01      # ops' Self CUDA sum vs Self CUDA time total (same records: rounding)
TIME_TOLERANCE = 0.25     # ours vs torch.profiler's GPU time per figure (run-to-run jitter)
TIME_SLACK_US = 5.0       # ... or this many us, for the small figures at size 64
# The article's verdict: GPU time against CPU time in each tool's own table.
OVERHEAD_BOUND_BELOW = 0.10   # size 64: Self CUDA time total < 10% of Self CPU time total
COMPUTE_BOUND_ABOVE = 0.50    # size 4096: > 50%
RUN_TIMEOUT_S = 120

_UNITS = (("ms", 1e3), ("us", 1.0), ("s", 1e6))


def duration_us(cell):
    """(us, rounding in us) of a table cell such as '12.345us', '1.234ms', '2.000s'. The
    rounding is half the last printed digit: 0.0005 us, 0.5 us or 500 us."""
    cell = cell.strip()
    for unit, scale in _UNITS:
        if cell.endswith(unit):
            number = cell[:-len(unit)]
            decimals = len(number.split(".", 1)[1]) if "." in number else 0
            return float(number) * scale, 0.5 * 10 ** -decimals * scale
    raise ValueError(f"not a duration: {cell!r}")


class Table:
    """gprof-run's (and torch's) key_averages() table text, parsed.
    rows: [dict] with name, calls, self_cpu, cpu_total, self_cuda, cuda_total (us; None for a
    column the table lacks), round (the print rounding of each duration cell, us) and cells (the
    raw text by header). self_cpu_total, self_cuda_total (us or None); notes: the lines after."""

    def __init__(self, rows, self_cpu_total, self_cuda_total, notes=(), rounding=None):
        self.rows = list(rows)
        self.self_cpu_total = self_cpu_total
        self.self_cuda_total = self_cuda_total
        self.notes = list(notes)
        self.total_rounding = rounding or {}

    def host(self, name):
        """The host (op, range, API) rows named `name` summed into one dict, or None. Several
        rows share a name when shapes were recorded; a device row (no CPU time) never counts."""
        found = [r for r in self.rows if r["name"] == name and not is_device_row(r)]
        if not found:
            return None
        out = {"name": name, "calls": sum(r["calls"] for r in found)}
        for k in ("self_cpu", "cpu_total", "self_cuda", "cuda_total"):
            out[k] = sum(r[k] or 0.0 for r in found)
            out["round_" + k] = sum(r["round"].get(k, 0.0) for r in found)
        return out

    def device_rows(self):
        return [r for r in self.rows if is_device_row(r)]

    def partial(self):
        return any("partial" in n for n in self.notes if n.startswith("Profile window"))

    def loss_notes(self):
        return [n for n in self.notes if not n.startswith("Profile window")]


def is_device_row(r):
    """Kernels, copies and memsets: no CPU time, GPU time of their own (torch's device rows)."""
    return not r["self_cpu"] and not r["cpu_total"] and bool(r["self_cuda"] or r["cuda_total"])


def _is_separator(line):
    return line.startswith("-") and set(line.rstrip()) <= {"-", " "}


def parse_table(text):
    """The table text (outputs/table/table.cpp's layout, which is torch's) -> Table. Raises
    ValueError when the text is not such a table.

    The Name column's bound comes from the dashed separator line (its first run of dashes;
    names are cut to fit it, so nothing spills out of it). The other cells are right-aligned in
    12-character columns, but a longer one is written whole and pushes the rest of its line to
    the right (torch's header "CUDA time avg" is 13 characters), so past the Name column the
    cells are split at runs of two or more spaces: no header, number or shape list holds one."""
    lines = text.splitlines()
    seps = [i for i, line in enumerate(lines) if _is_separator(line)]
    if len(seps) < 3:
        raise ValueError("not a key_averages table (fewer than three separator lines)")
    name_end = lines[seps[0]].find(" ")
    if name_end <= 0:
        raise ValueError("not a key_averages table (no column bounds in the separator line)")

    def cells(line):
        rest = line[name_end:].strip()
        return [line[:name_end].strip()] + (re.split(r"\s{2,}", rest) if rest else [])

    header = cells(lines[seps[0] + 1])
    if not header or header[0] != "Name" or "# of Calls" not in header:
        raise ValueError(f"unexpected table header {header}")
    columns = {"Self CPU": "self_cpu", "CPU total": "cpu_total", "Self CUDA": "self_cuda",
               "CUDA total": "cuda_total"}
    rows = []
    for line in lines[seps[1] + 1:seps[2]]:
        raw = dict(zip(header, cells(line)))
        row = {"name": raw["Name"], "calls": int(raw["# of Calls"]), "cells": raw, "round": {}}
        for title, key in columns.items():
            if title in raw:
                row[key], row["round"][key] = duration_us(raw[title])
            else:
                row[key] = None
        rows.append(row)
    totals, rounding, notes = {}, {}, []
    for line in lines[seps[2] + 1:]:
        m = re.match(r"Self (CPU|CUDA) time total: (\S+)\s*$", line)
        if m:
            key = "cpu" if m.group(1) == "CPU" else "cuda"
            totals[key], rounding[key] = duration_us(m.group(2))
        elif line.strip():
            notes.append(line.strip())
    return Table(rows, totals.get("cpu"), totals.get("cuda"), notes, rounding)


def read_table(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse_table(f.read())


def window_tables(out_dir):
    """The window tables gprof-run wrote in out_dir (`*.cycle<C>.steps<A>-<B>.table.txt`)."""
    return sorted(glob.glob(os.path.join(out_dir, "*.cycle*.steps*-*.table.txt"))) \
        if out_dir else []


# ---- torch.profiler's side ---------------------------------------------------------------------

def reference_rows(stdout):
    """The JSON line torch_matmul_add.py --mode torch printed -> dict, or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and "rows" in data:
                return data
    return None


def reference_op(ref, name):
    """torch's host row `name` (device_type CPU: a record_function also has a GPU-side row of
    the same name, its annotation span) in our units: calls, self_cpu, ..., or None."""
    found = [r for r in (ref or {}).get("rows", [])
             if r.get("name") == name and r.get("device_type", "CPU") == "CPU"]
    if not found:
        return None
    return {"name": name, "calls": sum(int(r["count"]) for r in found),
            "self_cpu": sum(r["self_cpu_time_total"] for r in found),
            "cpu_total": sum(r["cpu_time_total"] for r in found),
            "self_cuda": sum(r["self_device_time_total"] for r in found),
            "cuda_total": sum(r["device_time_total"] for r in found)}


# ---- the verdict -------------------------------------------------------------------------------

def _close(ours, theirs):
    return abs(ours - theirs) <= max(TIME_TOLERANCE * abs(theirs), TIME_SLACK_US)


def _us(v):
    return "-" if v is None else f"{v:.3f} us"


def _ratio(cuda, cpu):
    return cuda / cpu if cuda is not None and cpu else None


def _pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"


def judge(size, table, ref, iters):
    """([(status, text)], figure rows) for one size: gprof-run's window Table against torch's
    key_averages() dict (None when torch's run gave none). The rules are in the module doc."""
    tag = f"size {size}:"
    checks, figures = [], []
    if table is None:
        return [(FAIL, f"{tag} gprof-run wrote no window table")], figures
    ops = {n: table.host(n) for n in OPS}
    refs = {n: reference_op(ref, n) for n in OPS}

    missing = [n for n in OPS if ops[n] is None]
    checks.append((FAIL if missing else PASS,
                   f"{tag} rows {', '.join(OPS)} in gprof-run's table"
                   + (f" — missing: {', '.join(missing)}" if missing else "")))
    if ref is None:
        checks.append((WARN, f"{tag} no torch.profiler rows to compare with: call counts are "
                             f"judged against the {iters} compared calls"))
    else:
        ref_missing = [n for n in OPS if refs[n] is None]
        if ref_missing:
            checks.append((WARN, f"{tag} torch.profiler's table lacks {', '.join(ref_missing)} "
                                 f"(their counts are judged against the {iters} calls)"))
        odd = [f"{n}={refs[n]['calls']}" for n in OPS
               if refs[n] is not None and refs[n]["calls"] != iters]
        if odd:
            checks.append((WARN, f"{tag} torch.profiler counts other than the {iters} compared "
                                 f"calls: {', '.join(odd)}"))
    want = {n: refs[n]["calls"] if refs[n] is not None else iters for n in OPS}
    whose = {n: "torch.profiler" if refs[n] is not None else "calls" for n in OPS}
    wrong = [f"{n} {ops[n]['calls']} ({whose[n]} {want[n]})" for n in OPS
             if ops[n] is not None and ops[n]["calls"] != want[n]]
    present = [n for n in OPS if ops[n] is not None]
    if present:
        checks.append((FAIL if wrong else PASS,
                       f"{tag} call counts equal "
                       + ("torch.profiler's" if ref is not None else f"the {iters} compared calls")
                       + (f" — wrong: {'; '.join(wrong)}" if wrong else
                          " (" + ", ".join(f"{n} {ops[n]['calls']}" for n in present) + ")")))

    mm, add, matmul = ops["aten::mm"], ops["aten::add"], ops["aten::matmul"]
    if mm is not None:
        checks.append((PASS if mm["self_cuda"] > 0 else FAIL,
                       f"{tag} aten::mm's Self CUDA {_us(mm['self_cuda'])} > 0 (its "
                       "kernel's time)"))
    if table.self_cuda_total is None:
        checks.append((FAIL, f"{tag} gprof-run's table has no Self CUDA time total (no GPU "
                             "records in the window)"))
    else:
        host = [r for r in table.rows if not is_device_row(r) and r["self_cuda"]]
        owned = sum(r["self_cuda"] for r in host)
        # Every printed cell is rounded: half its last digit, per cell summed and for the total.
        slack = sum(r["round"].get("self_cuda", 0.0) for r in host) + \
            table.total_rounding.get("cuda", 0.0)
        tol = max(SUM_TOLERANCE * table.self_cuda_total, slack)
        ok = abs(owned - table.self_cuda_total) <= tol
        checks.append((PASS if ok else FAIL,
                       f"{tag} the ops' Self CUDA add up to Self CUDA time total: "
                       + " + ".join(f"{r['name']} {_us(r['self_cuda'])}" for r in host[:6])
                       + (" + ..." if len(host) > 6 else "")
                       + f" = {_us(owned)} vs {_us(table.self_cuda_total)} (within "
                       f"{SUM_TOLERANCE:.0%} or the print rounding, {tol:.3f} us)"))
    if matmul is not None and mm is not None:
        ref_self = refs["aten::matmul"]["self_cuda"] if refs["aten::matmul"] else 0.0
        if ref_self <= 0:
            ok_self = matmul["self_cuda"] <= matmul["round_self_cuda"]
            checks.append((PASS if ok_self else FAIL,
                           f"{tag} aten::matmul's Self CUDA {_us(matmul['self_cuda'])} is 0 (it "
                           "launches nothing itself; torch.profiler: 0)"))
        else:
            checks.append((WARN, f"{tag} torch.profiler gives aten::matmul Self CUDA "
                                 f"{_us(ref_self)} (ours {_us(matmul['self_cuda'])}): not judged"))
        slack = matmul["round_cuda_total"] + mm["round_self_cuda"]
        ok_total = matmul["cuda_total"] + slack >= mm["self_cuda"]
        checks.append((PASS if ok_total else FAIL,
                       f"{tag} aten::matmul's CUDA total {_us(matmul['cuda_total'])} >= aten::mm's "
                       f"Self CUDA {_us(mm['self_cuda'])} (the kernels of the ops nested in it)"))

    # Side by side with torch.profiler; GPU figures judged within the timing tolerance.
    far = []
    for n in OPS:
        o, t = ops[n], refs[n]
        if o is None:
            continue
        for key, label in (("self_cuda", "Self CUDA"), ("cuda_total", "CUDA total")):
            theirs = t[key] if t else None
            judged = theirs is not None and (key == "self_cuda" and n in ("aten::mm", "aten::add")
                                            or key == "cuda_total" and n in ("aten::matmul",
                                                                             "matmul_add"))
            close = _close(o[key], theirs) if judged else None
            if judged and not close:
                far.append(f"{n} {label} {_us(o[key])} vs {_us(theirs)}")
            figures.append([size, n, label, _us(o[key]), _us(theirs),
                            "yes" if close else "no" if judged else "-"])
        figures.append([size, n, "Self CPU", _us(o["self_cpu"]), _us(t["self_cpu"] if t else None),
                        "-"])
        figures.append([size, n, "# of Calls", o["calls"], t["calls"] if t else "-", "-"])
    ref_cuda = ref.get("self_device_total") if ref else None
    ref_cpu = ref.get("self_cpu_total") if ref else None
    if table.self_cuda_total is not None and ref_cuda is not None:
        close = _close(table.self_cuda_total, ref_cuda)
        if not close:
            far.append(f"Self CUDA time total {_us(table.self_cuda_total)} vs {_us(ref_cuda)}")
        figures.append([size, "(table)", "Self CUDA time total", _us(table.self_cuda_total),
                        _us(ref_cuda), "yes" if close else "no"])
    figures.append([size, "(table)", "Self CPU time total", _us(table.self_cpu_total),
                    _us(ref_cpu), "-"])
    if ref is not None:
        checks.append((WARN if far else PASS,
                       f"{tag} GPU times within {TIME_TOLERANCE:.0%} or {TIME_SLACK_US:g} us of "
                       "torch.profiler's (aten::mm and aten::add Self CUDA, aten::matmul and "
                       "matmul_add CUDA total, Self CUDA time total)"
                       + (f" — outside: {'; '.join(far)}" if far else "")))

    ours_r = _ratio(table.self_cuda_total, table.self_cpu_total)
    ref_r = _ratio(ref_cuda, ref_cpu)
    figures.append([size, "(table)", "Self CUDA / Self CPU time total", _pct(ours_r),
                    _pct(ref_r), "-"])
    if size <= 64:
        want_text = (f"overhead-bound: Self CUDA time total < {OVERHEAD_BOUND_BELOW:.0%} of Self "
                     "CPU time total")
        ok = ours_r is not None and ours_r < OVERHEAD_BOUND_BELOW
    else:
        want_text = (f"compute-bound: Self CUDA time total > {COMPUTE_BOUND_ABOVE:.0%} of Self "
                     "CPU time total")
        ok = ours_r is not None and ours_r > COMPUTE_BOUND_ABOVE
    checks.append((PASS if ok else WARN,
                   f"{tag} the article's verdict, {want_text}: gprof-run {_pct(ours_r)} "
                   f"({_us(table.self_cuda_total)} / {_us(table.self_cpu_total)}), torch.profiler "
                   f"{_pct(ref_r)} ({_us(ref_cuda)} / {_us(ref_cpu)})"
                   + ("" if ok else " (timing: a WARN, not a FAIL)")))
    if table.partial():
        checks.append((WARN, f"{tag} the window is partial (the program exited before its last "
                             "step ended)"))
    if table.loss_notes():
        checks.append((WARN, f"{tag} the table's notes: {'; '.join(table.loss_notes()[:4])}"))
    return checks, figures


# ---- the runs ----------------------------------------------------------------------------------

def gprof_options(iters, warmup):
    """The schedule whose one window is the compared calls (module doc). The glob is matched
    against the NVTX text as torch pushes it, "matmul_add, op_id = N" (getNvtxStr); ops
    ("aten::...") never match it."""
    return ["--step", "nvtx:matmul_add*", "--wait", str(warmup), "--warmup", "0",
            "--active", str(iters), "--repeat", "1"]


def run(runner, section, python, sizes=SIZES, iters=5, warmup=2):
    status, text = torch_compare.torch_status(runner, python)
    if status != "ok":
        why = "torch not importable" if status == "no-torch" else "torch has no CUDA device"
        section.status(SKIP if runner.standin else FAIL,
                       f"skipped: {why} ({torch_compare._short(text, 120)})" if runner.standin
                       else f"{why} with `{python}`: {torch_compare._short(text, 160)}")
        return
    section.add(f"torch: {text.splitlines()[-1] if text else '?'}; `torch_matmul_add.py`: "
                f"{warmup} warm-up calls, {iters} compared calls, 1 after; gprof-run options "
                f"`{' '.join(gprof_options(iters, warmup))}`.", "")
    figures = []
    for size in sizes:
        args = [SCRIPT, "--size", str(size), "--iters", str(iters), "--warmup", str(warmup)]
        g = runner.profile(f"matmul-add-{size}", [python] + args + ["--mode", "plain"],
                           timeout_s=RUN_TIMEOUT_S, options=gprof_options(iters, warmup))
        section.check(g.ok() and "GPROF_EXAMPLE_DONE torch_matmul_add_plain" in g.stdout,
                      f"size {size}: under gprof-run the program exited {g.returncode}"
                      + (" (timed out)" if g.timed_out else ""))
        t = runner.run([python] + args + ["--mode", "torch"], timeout_s=RUN_TIMEOUT_S)
        ref = reference_rows(t.stdout) if t.ok() else None
        section.check(ref is not None, f"size {size}: under torch.profiler the program exited "
                      f"{t.returncode}" + (" (timed out)" if t.timed_out else "")
                      + ("" if ref is not None or not t.ok() else " but printed no rows"))
        table, path = None, ""
        # find_outputs names the folder only once it holds a trace; the tables are looked for in
        # the folder asked for all the same.
        out_dir = g.out_dir or g.argv[g.argv.index("-o") + 1]
        tables = window_tables(out_dir if os.path.isdir(out_dir) else "")
        want = f".cycle0.steps{warmup}-{warmup + iters - 1}.table.txt"
        exact = [p for p in tables if p.endswith(want)]
        if exact or tables:
            path = (exact or tables)[0]
            try:
                table = read_table(path)
            except (OSError, ValueError) as e:
                section.status(FAIL, f"size {size}: {os.path.basename(path)} does not parse: {e}")
            if not exact:
                section.status(FAIL, f"size {size}: no window table `*{want}`; judging "
                                     f"{os.path.basename(path)}")
        else:
            have = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
            section.status(FAIL, f"size {size}: no window table `*{want}` in {out_dir}"
                                 + (f"; files: {have[:8]}" if have else " (no such folder)"))
        if table is not None:
            checks, rows = judge(size, table, ref, iters)
            for st, msg in checks:
                section.status(st, msg)
            figures += rows
            kernels = table.device_rows()
            section.add(f"Size {size}: `{path}`; device rows: "
                        + ("; ".join(f"`{r['name']}` {r['calls']} x, {_us(r['self_cuda'])}"
                                     for r in kernels[:6]) or "none") + ".", "")
        for r, label in ((g, "gprof-run"), (t, "torch.profiler")):
            if not r.ok():
                section.add(f"Size {size}, {label} run output (tail):", "", "```", r.tail(), "```",
                            "")
    if figures:
        section.add(f"gprof-run against torch.profiler (GPU figures judged within "
                    f"{TIME_TOLERANCE:.0%} or {TIME_SLACK_US:g} us; CPU figures shown, not "
                    "judged):", "")
        section.table(["size", "row", "figure", "gprof-run", "torch.profiler", "within"],
                      figures)
