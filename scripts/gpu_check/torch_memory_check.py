"""Step 9b of scripts/gpu-check (issue 19): torch's memory columns on a real GPU.

torch_matmul_add.py at --size 4096 (bf16: each matmul and each add makes a 32 MiB result),
under `gprof-run --profile-memory` with step 9's schedule (the window is the compared calls), and
under torch.profiler(profile_memory=True) around the same calls. gprof-run's CUDA Mem columns
come from the caching allocator's own history (the Python hook's .torchmem, attributed to ops by
time); torch's from the allocator's reports inside each op. Judged per row of OPS:

FAIL: no window table or no memory columns; a row's Self CUDA Mem or CUDA Mem further from
      torch.profiler's than the print rounding of our cell (two decimals of its unit) plus
      BLOCK_SLACK bytes per call (we count the request rounded to 512 B, torch the block it got).
"""

import os
import re

from report import FAIL, SKIP
import torch_compare
import torch_ops_check

SIZE = 4096
OPS = ("matmul_add", "aten::matmul", "aten::mm", "aten::add")
BLOCK_SLACK = 512          # bytes per call: a block can exceed the rounded request by its split
RUN_TIMEOUT_S = 120
_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def memory_bytes(cell):
    """(bytes, rounding in bytes) of a memory cell such as '32.00 MB', '-512 B' (torch's
    _format_memory units, old spelling Kb/Mb/Gb/b too)."""
    m = re.fullmatch(r"\s*(-?\d+(?:\.(\d+))?) ([KMG]?[Bb])\s*", cell)
    if not m:
        raise ValueError(f"not a memory cell: {cell!r}")
    unit = _UNITS[m.group(3).upper()]
    decimals = len(m.group(2) or "")
    return float(m.group(1)) * unit, (0.5 * 10 ** -decimals * unit if decimals else 0)


def judge(table, ref, iters):
    """[(status, message)] and the figure rows [size, row, figure, ours, theirs, ok]."""
    checks, figures = [], []
    for name in OPS:
        ours = [r for r in table.rows
                if r["name"] == name and not torch_ops_check.is_device_row(r)]
        theirs = [r for r in (ref or {}).get("rows", [])
                  if r.get("name") == name and r.get("device_type", "CPU") == "CPU"]
        if not ours or not theirs:
            checks.append((FAIL, f"{name}: no row in " + ("our table" if not ours
                                                          else "torch.profiler's")))
            continue
        for title, key in (("Self CUDA Mem", "self_device_memory_usage"),
                           ("CUDA Mem", "device_memory_usage")):
            cells = [r["cells"].get(title) for r in ours]
            if None in cells:
                checks.append((FAIL, f"{name}: our table has no {title} column"))
                continue
            parsed = [memory_bytes(c) for c in cells]
            value, rounding = sum(v for v, _ in parsed), sum(r for _, r in parsed)
            cell = " + ".join(cells)
            want = sum(int(r.get(key, 0)) for r in theirs)
            ok = abs(value - want) <= rounding + BLOCK_SLACK * iters
            figures.append([SIZE, name, title, cell, f"{want} B", "yes" if ok else "NO"])
            if not ok:
                checks.append((FAIL, f"{name}: {title} {cell}, torch.profiler {want} B"))
    return checks, figures


def run(runner, section, python, iters=5, warmup=2):
    status, text = torch_compare.torch_status(runner, python)
    if status != "ok":
        why = "torch not importable" if status == "no-torch" else "torch has no CUDA device"
        section.status(SKIP if runner.standin else FAIL, f"skipped: {why}")
        return
    args = [torch_ops_check.SCRIPT, "--size", str(SIZE), "--iters", str(iters), "--warmup",
            str(warmup)]
    options = torch_ops_check.gprof_options(iters, warmup) + ["--profile-memory"]
    g = runner.profile("matmul-add-memory", [python] + args + ["--mode", "plain"],
                       timeout_s=RUN_TIMEOUT_S, options=options)
    section.check(g.ok(), f"under gprof-run --profile-memory the program exited {g.returncode}")
    t = runner.run([python] + args + ["--mode", "torch", "--profile-memory"],
                   timeout_s=RUN_TIMEOUT_S)
    ref = torch_ops_check.reference_rows(t.stdout) if t.ok() else None
    section.check(ref is not None, f"under torch.profiler(profile_memory=True) the program "
                                   f"exited {t.returncode}")
    out_dir = g.out_dir or g.argv[g.argv.index("-o") + 1]
    tables = torch_ops_check.window_tables(out_dir if os.path.isdir(out_dir) else "")
    if not tables:
        section.status(FAIL, f"no window table in {out_dir}")
        return
    checks, figures = judge(torch_ops_check.read_table(tables[0]), ref, iters)
    for st, msg in checks:
        section.status(st, msg)
    section.check(not checks, f"{len(figures)} memory figures of {len(OPS)} ops against "
                              "torch.profiler")
    if figures:
        section.table(["size", "row", "figure", "gprof-run", "torch.profiler", "within"],
                      figures)
