"""gprof-run on unmodified PyTorch programs, checked against torch.profiler run on the same code.

Real processes: `gprof-run python train_loop.py` (no code change), `gprof-run torchrun ...
ddp_train.py` (four gloo ranks, their clocks skewed by libfaketime: each profiled by rank,
merged with the clocks lined up) and, in a separate process,
torch_reference.py, which profiles the same train_loop.run() with torch.profiler (CPU activity).
What a torch.profiler user checks: the same op names with the same call counts in the table,
Self <= total, steps from the optimizer that drive the schedule, shapes grouping, backward ops,
cpu_op / user_annotation in a trace that passes gprof-run's Perfetto checks, and a program that
runs torch.profiler itself keeping its own output. CPU only: this verifies the op ranges, names,
counts and steps; GPU time per op needs a GPU (scripts/gpu-check).

Environment: TORCH_PYTHON (a Python with torch), GPROF_RUN (the gprof-run under test).
"""
import glob
import json
import os
import re
import socket
import subprocess
import sys
import unittest

from torch_runner import GPROF_RUN, HERE, TORCH_PYTHON, GprofTorchCase, kept_output, needs_torch

STEPS = 5
# libfaketime, which skews the torchrun test's rank clocks (skewed_clock.sh), and the skews.
FAKETIME_LIB = next((p for p in glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
                     + glob.glob("/usr/lib/faketime/libfaketime.so.1")), "")
SKEWS = ("+0", "+2", "-1", "+3")


def parse_table(text):
    """Rows of a key_averages()-style table: a list of dicts keyed by the header cells. The Name
    column's width comes from the dashed separator line; the other cells are separated by two or
    more spaces (a header such as "CUDA time avg" is wider than its column, as in torch's)."""
    lines = text.splitlines()
    seps = [i for i, l in enumerate(lines) if l.startswith("---")]
    if len(seps) < 3:
        raise AssertionError("not a table:\n" + text)
    width = lines[seps[0]].index(" ")
    cells = lambda l: [l[:width].strip()] + re.split(r"\s{2,}", l[width:].strip())
    header = re.split(r"\s{2,}", lines[seps[0] + 1].strip())
    # Only the last cell (Input Shapes) can be empty.
    return [dict(zip(header, cells(l) + [""])) for l in lines[seps[1] + 1:seps[2]]]


def parse_grouped_table(text):
    """Rows of a table grouped by source location (--with-stack): torch's layout, a row line
    with the innermost stack entry in the last column ("Source Location"), one line per further
    entry with the other cells empty, then an empty line. Each row: a dict of the other cells
    plus "Source Location", the list of its entries."""
    lines = text.splitlines()
    seps = [i for i, l in enumerate(lines) if l.startswith("---")]
    if len(seps) < 3:
        raise AssertionError("not a table:\n" + text)
    header_line = lines[seps[0] + 1]
    source_at = header_line.index("Source Location")
    width = lines[seps[0]].index(" ")
    header = re.split(r"\s{2,}", header_line[:source_at].strip())
    rows = []
    for l in lines[seps[1] + 1:seps[2]]:
        left, source = l[:source_at], l[source_at:].strip()
        if left.strip():
            cells = [left[:width].strip()] + re.split(r"\s{2,}", left[width:].strip())
            row = dict(zip(header, cells))
            row["Source Location"] = [source] if source else []
            rows.append(row)
        elif source:
            rows[-1]["Source Location"].append(source)
    return lines[:seps[0]], rows


def us(cell):
    for unit, f in (("ms", 1e3), ("us", 1.0), ("s", 1e6)):
        if cell.endswith(unit):
            return float(cell[:-len(unit)]) * f
    raise ValueError(cell)


def cut(name):
    # Both tables cut names longer than their 55-column name field; compare the kept part.
    return name[:52]


@needs_torch
class TorchEndToEnd(GprofTorchCase):
    def reference(self, *args):
        p = subprocess.run([TORCH_PYTHON, os.path.join(HERE, "torch_reference.py")] + list(args),
                           cwd=HERE, capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout.splitlines()[-1])["rows"]

    def table(self, out, pattern="table.txt"):
        files = glob.glob(os.path.join(out, pattern))
        self.assertEqual(len(files), 1, os.listdir(out))
        with open(files[0]) as f:
            return parse_table(f.read()), files[0]

    def torchrun(self):
        """`gprof-run torchrun --standalone --nproc-per-node 4 ddp_train.py 3`, torchrun as the
        torch wheel installs it (torch.distributed.run), run once for the tests below. With
        libfaketime each worker's clock is shifted as if it ran on its own badly synchronized
        host (SKEWS, through skewed_clock.sh). Kept for tests/consumers (HTA's multi-rank
        analyses on the per-rank traces)."""
        cls = type(self)
        if getattr(cls, "_torchrun", None) is None:
            out = kept_output("torchrun", self.tmp)
            cmd = [GPROF_RUN, "-q", "-o", out, TORCH_PYTHON, "-m", "torch.distributed.run",
                   "--standalone", "--nproc-per-node", "4"]
            if FAKETIME_LIB:
                cmd += ["--no-python", "sh", os.path.join(HERE, "skewed_clock.sh"), TORCH_PYTHON]
            cmd += [os.path.join(HERE, "ddp_train.py"), "3"]
            env = dict(os.environ, SKEWED_CLOCKS=" ".join(SKEWS), SKEWED_CLOCK_LIB=FAKETIME_LIB)
            p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300,
                               env=env)
            cls._torchrun = (out, p)
        return cls._torchrun

    def test_torchrun_ranks_are_profiled_named_and_merged(self):
        # Every worker is profiled with its rank (RANK, WORLD_SIZE, LOCAL_RANK from torchrun),
        # each trace has distributedInfo (and a TensorBoard link), and the merged view has one
        # group per rank and passes gprof-run check.
        out, p = self.torchrun()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(l for l in p.stdout.splitlines() if l.startswith("DDP_DONE")),
                         ["DDP_DONE %d" % r for r in range(4)])
        ranks, rank_files = {}, []
        for path in glob.glob(os.path.join(out, "*.trace.json")) + [os.path.join(out, "trace.json")]:
            if not os.path.exists(path):
                continue
            with open(path) as f:
                t = json.load(f)
            if "distributedInfo" in t:
                ranks[t["distributedInfo"]["rank"]] = t
                rank_files.append(os.path.basename(path))
        self.assertEqual(sorted(ranks), [0, 1, 2, 3], os.listdir(out))
        # tensorboard/ links the ranks' traces only, one file per rank as torch.profiler writes
        # them: not torchrun's own (no rank), which HTA would take for rank 0.
        # Each named <hostname>_<pid> (tensorboard_trace_handler's default worker), so that
        # TensorBoard's plugin lists one worker per rank.
        self.assertEqual(sorted(os.listdir(os.path.join(out, "tensorboard"))),
                         sorted("%s_%d.pt.trace.json" % (socket.gethostname(), t["gprof"]["pid"])
                                for t in ranks.values()))
        for rank, t in ranks.items():
            self.assertEqual(t["distributedInfo"]["world_size"], 4)
            self.assertEqual(t["gprof"]["rank"], rank)
            names = {e.get("name") for e in t["traceEvents"] if e.get("cat") == "cpu_op"}
            self.assertIn("aten::addmm", names)  # torch's own op names in each rank
        merged = os.path.join(out, "merged", "trace.json")
        with open(merged) as f:
            doc = json.load(f)
        groups = {e["args"]["name"] for e in doc["traceEvents"]
                  if e.get("ph") == "M" and e.get("name") == "process_name"
                  and e["args"]["name"].startswith("rank ") and " GPU " not in e["args"]["name"]}
        self.assertEqual(len(groups), 4, groups)
        local = {i["rank"]: i.get("local_rank") for i in doc["gprof"]["inputs"] if i["rank"] >= 0}
        self.assertEqual(local, {0: 0, 1: 1, 2: 2, 3: 3})  # LOCAL_RANK, recorded per dump
        check = subprocess.run([GPROF_RUN, "check", merged], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

    @unittest.skipUnless(FAKETIME_LIB, "no libfaketime (Debian's libfaketime; scripts/setup "
                                       "installs it) to skew the ranks' clocks")
    def test_skewed_rank_clocks_line_up_in_the_merged_trace(self):
        # Ranks' clocks +0, +2, -1, +3 s off (libfaketime). The k-th gloo:all_reduce (gloo's work
        # on its worker thread) ends at nearly the same true time on every rank; as recorded they
        # end 4 s apart (+3 against -1). Merged, they end within 20 ms of each other (median over
        # k): the slack is what a busy 2-core machine adds to when each rank's gloo thread
        # finishes, far below the skews. The merged findings name the offsets.
        out, p = self.torchrun()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "merged", "trace.json")) as f:
            doc = json.load(f)
        pids = {1000 * (k + 1) for k, i in enumerate(doc["gprof"]["inputs"]) if i["rank"] >= 0}
        ends = {pid: [] for pid in pids}
        for e in doc["traceEvents"]:
            if e.get("name") == "gloo:all_reduce" and e.get("ph") == "X" and e["pid"] in ends:
                ends[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
        counts = [len(v) for v in ends.values()]
        self.assertEqual(len(counts), 4)
        self.assertGreaterEqual(min(counts), 6, counts)  # 3 steps x 2 parameters
        per_rank = [[end for _, end in sorted(v)] for v in ends.values()]
        spreads = sorted(max(r[k] for r in per_rank) - min(r[k] for r in per_rank)
                         for k in range(min(counts)))
        median_ms = spreads[(len(spreads) - 1) // 2] / 1000.0
        self.assertLess(median_ms, 20.0, spreads)
        with open(os.path.join(out, "merged", "findings.json")) as f:
            clock = [x for x in json.load(f)["findings"] if x["id"] == "clock_alignment"]
        self.assertEqual(len(clock), 1)
        self.assertIn("rank 3", clock[0]["evidence"]["max_offset_at"])
        self.assertEqual(clock[0]["evidence"]["by_collectives"], 3)

    def test_op_names_and_counts_equal_torch_profilers(self):
        theirs = {cut(r["name"]): r["count"] for r in self.reference(str(STEPS))}
        # Both ways in: torch's ITT observer (the default) and its NVTX one.
        for itt in ("1", "0"):
            with self.subTest(GPROF_TORCH_ITT=itt):
                self.check_names_and_counts(itt, theirs)

    def check_names_and_counts(self, itt, theirs):
        os.environ["GPROF_TORCH_ITT"] = itt
        try:
            out, p = self.gprof("plain" + itt, [], "train_loop.py", str(STEPS))
        finally:
            del os.environ["GPROF_TORCH_ITT"]
        self.assertIn("final loss", p.stdout)
        rows, _ = self.table(out)
        ours = {cut(r["Name"]): int(r["# of Calls"]) for r in rows}
        # The ITT path hands over names only; the NVTX path also torch's op ids (trace args).
        with open(os.path.join(out, "trace.json")) as f:
            ops = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cpu_op"]
        self.assertTrue(ops)
        with_ids = [e for e in ops if "Record function id" in e.get("args", {})]
        self.assertEqual(len(with_ids), 0 if itt == "1" else len(ops))
        # Ours has the optimizer steps as ProfilerStep* (torch.profiler has them only when the
        # program calls prof.step()).
        self.assertEqual(ours.pop("ProfilerStep*"), STEPS + 1)  # STEPS ended, one still open
        missing = {k: v for k, v in theirs.items() if k not in ours}
        extra = {k: v for k, v in ours.items() if k not in theirs}
        self.assertEqual(missing, {}, "ops torch.profiler has and gprof-run lacks")
        self.assertEqual(extra, {}, "ops gprof-run has and torch.profiler lacks")
        differ = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
        self.assertEqual(differ, {}, "call counts (gprof-run, torch.profiler)")
        # The ops a user looks for, by torch's names, with the loop's counts.
        self.assertEqual(ours["Optimizer.step#AdamW.step"], STEPS)
        self.assertEqual(ours["Optimizer.zero_grad#AdamW.zero_grad"], STEPS)
        self.assertEqual(ours["aten::linear"], 2 * STEPS)
        self.assertEqual(ours["aten::gelu"], STEPS)
        self.assertEqual(ours["autograd::engine::evaluate_function: AddmmBackward0"], 2 * STEPS)
        self.assertEqual(ours["AddmmBackward0"], 2 * STEPS)
        self.assertEqual(ours["GeluBackward0"], STEPS)

    def test_memory_columns_from_the_caching_allocator(self):
        # `gprof-run --profile-memory` on fake_allocator.py: real torch ops, regions, threads,
        # hook and launcher; only the CUDA caching allocator is faked (its docstring derives
        # every number below). Torch's _format_memory units.
        out, p = self.gprof("memory", ["--profile-memory", "--row-limit", "-1"],
                            "fake_allocator.py")
        self.assertIn("FAKE_ALLOCATOR_DONE 6", p.stdout)
        self.assertEqual(len(glob.glob(os.path.join(out, "*.torchmem"))), 1, os.listdir(out))
        rows, _ = self.table(out)
        by_name = {r["Name"]: r for r in rows}
        cells = lambda name: (by_name[name]["CUDA Mem"], by_name[name]["Self CUDA Mem"])
        self.assertEqual(cells("alloc_region"), ("1.00 MB", "3.00 MB"))
        self.assertEqual(cells("inner_region"), ("-2.00 MB", "-2.00 MB"))
        self.assertEqual(cells("worker_region"), ("5.00 MB", "5.00 MB"))
        self.assertEqual(cells("untagged_region"), ("512 B", "512 B"))
        self.assertEqual(cells("[memory]"), ("2.00 KB", "2.00 KB"))
        self.assertEqual(by_name["[memory]"]["# of Calls"], "1")
        # Real ops that allocated nothing through the (fake) allocator hold no CUDA memory.
        self.assertEqual(cells("aten::mm"), ("0 B", "0 B"))
        # The trace's counter of torch's blocks, after each event: 3 MiB, + 1 MiB, - 3 MiB,
        # + 5 MiB, + 512 B, + 2048 B; its peak marker at the last; the peak finding.
        mib = 1 << 20
        with open(os.path.join(out, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        counter = [e["args"]["bytes"] for e in events
                   if e.get("ph") == "C" and e.get("name") == "GPU 0 memory allocated by torch"]
        self.assertEqual(counter, [3 * mib, 4 * mib, mib, 6 * mib, 6 * mib + 512,
                                   6 * mib + 512 + 2048])
        self.assertIn("peak memory allocated by torch: 6.00 MB",
                      [e.get("name") for e in events if e.get("ph") == "i"])
        with open(os.path.join(out, "findings.json")) as f:
            peak = [x for x in json.load(f)["findings"] if x["id"] == "memory_peak"]
        self.assertEqual(len(peak), 1)
        self.assertEqual(peak[0]["evidence"]["peak_bytes"], 6 * mib + 512 + 2048)
        self.assertEqual(peak[0]["evidence"]["source"], "torch caching allocator")

    def test_memory_growth_of_torch_blocks_step_after_step(self):
        # fake_allocator.py leak: 6 real optimizer steps, each leaking a 2 MiB block (faked
        # allocator, see its docstring): memory_growth from torch's blocks, 2 MiB after step 0,
        # 12 MiB after the last step that leaked.
        out, p = self.gprof("leak", ["--profile-memory"], "fake_allocator.py", "leak")
        self.assertIn("FAKE_ALLOCATOR_DONE 6", p.stdout)
        with open(os.path.join(out, "findings.json")) as f:
            growth = [x for x in json.load(f)["findings"] if x["id"] == "memory_growth"]
        self.assertEqual(len(growth), 1, p.stderr)
        ev = growth[0]["evidence"]
        self.assertEqual(ev["source"], "torch caching allocator")
        self.assertEqual(ev["first_step_end_bytes"], 2 << 20)
        self.assertEqual(ev["last_step_end_bytes"], 12 << 20)
        self.assertGreaterEqual(ev["steps"], 6)

    def test_self_is_within_total_and_self_times_add_up_to_the_footer(self):
        out, _ = self.gprof("selfcheck", [], "train_loop.py", str(STEPS))
        rows, path = self.table(out)
        for r in rows:
            self.assertLessEqual(us(r["Self CPU"]), us(r["CPU total"]) + 0.001, r)
        with open(path) as f:
            footer = [l for l in f.read().splitlines() if l.startswith("Self CPU time total: ")]
        cell = footer[0].split(": ")[1]
        # Times print with three decimals of their unit: a cell is exact to half of that.
        step = lambda c: 1000.0 if not c.endswith(("ms", "us")) else (1.0 if c.endswith("ms") else 0.001)
        slack = sum(step(r["Self CPU"]) for r in rows) / 2 + step(cell) / 2
        self.assertAlmostEqual(sum(us(r["Self CPU"]) for r in rows), us(cell), delta=slack)
        # Nesting: aten::linear contains aten::addmm / aten::t, so its CPU total is at least
        # their Self CPU; the optimizer step holds the per-parameter adam ops.
        by = {r["Name"]: r for r in rows}
        self.assertGreater(us(by["aten::linear"]["CPU total"]), us(by["aten::linear"]["Self CPU"]))
        self.assertGreater(us(by["Optimizer.step#AdamW.step"]["CPU total"]),
                           us(by["Optimizer.step#AdamW.step"]["Self CPU"]))

    def test_optimizer_steps_drive_the_schedule(self):
        out, _ = self.gprof("sched", ["--wait", "1", "--warmup", "1", "--active", "2",
                                      "--repeat", "1"], "train_loop.py", "8")
        rows, path = self.table(out, "*.cycle0.steps2-3.table.txt")
        self.assertEqual(len(glob.glob(os.path.join(out, "*.table.txt"))), 1)  # repeat 1
        by = {r["Name"]: r for r in rows}
        # Steps 2 and 3: two optimizer steps, whole, and the forward/backward before each.
        self.assertEqual(int(by["ProfilerStep*"]["# of Calls"]), 2)
        self.assertEqual(int(by["Optimizer.step#AdamW.step"]["# of Calls"]), 2)
        self.assertEqual(int(by["aten::gelu"]["# of Calls"]), 2)
        self.assertEqual(int(by["GeluBackward0"]["# of Calls"]), 2)
        with open(path.replace(".table.txt", ".trace.json")) as f:
            trace = json.load(f)
        steps = sorted(e["name"] for e in trace["traceEvents"]
                       if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
        self.assertEqual(steps, ["ProfilerStep#2", "ProfilerStep#3"])

    def test_record_shapes_groups_by_name_and_shapes_like_torch(self):
        out, _ = self.gprof("shapes", ["--record-shapes"], "train_loop.py", str(STEPS))
        rows, _ = self.table(out)
        self.assertIn("Input Shapes", rows[0])
        ours = {(r["Name"], r["Input Shapes"]): int(r["# of Calls"]) for r in rows}
        theirs = {(r["name"], r["shapes"]): r["count"] for r in self.reference(str(STEPS), "--shapes")}
        for op in ("aten::addmm", "aten::gelu", "aten::mse_loss", "AddmmBackward0"):
            want = {k: v for k, v in theirs.items() if k[0] == op}
            got = {k: v for k, v in ours.items() if k[0] == op}
            self.assertTrue(want, op)
            self.assertEqual(got, want, op)
        # The two Linear layers are two addmm shape groups: [8, 16] x [16, 32] and [8, 32] x [32, 4].
        self.assertEqual(len([k for k in ours if k[0] == "aten::addmm"]), 2)

    def test_trace_files_ops_as_cpu_op_and_passes_the_checks(self):
        out, _ = self.gprof("trace", ["--record-shapes"], "train_loop.py", "2", "--threads")
        # `tensorboard --logdir out`: its profiler plugin's runs are the folders under the logdir
        # holding files named <worker>[.<span>].pt.trace.json[.gz] (torch_tb_profiler 0.4.3,
        # plugin.py _get_run_dirs, consts.WORKER_PATTERN); it loads those files.
        plugin_pattern = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")
        runs = {root: [n for n in files if plugin_pattern.match(n)]
                for root, _, files in os.walk(out)}
        runs = {root: names for root, names in runs.items() if names}
        self.assertEqual(len(runs), 1, runs)
        (run_dir, listed), = runs.items()
        self.assertEqual(len(listed), 1, listed)
        trace_path = os.path.join(run_dir, listed[0])
        self.assertTrue(os.path.samefile(trace_path, os.path.join(out, "trace.json")))
        with open(trace_path) as f:
            all_events = json.load(f)["traceEvents"]
        events = [e for e in all_events if e.get("ph") == "X"]
        cat = {}
        for e in events:
            cat.setdefault(e["name"], set()).add(e["cat"])
        self.assertEqual(cat["aten::addmm"], {"cpu_op"})
        self.assertEqual(cat["AddmmBackward0"], {"cpu_op"})
        self.assertEqual(cat["Optimizer.step#AdamW.step"], {"user_annotation"})
        self.assertEqual(cat["ProfilerStep#1"], {"user_annotation"})
        addmm = next(e for e in events if e["name"] == "aten::addmm")
        self.assertIn("Record function id", addmm["args"])
        self.assertIsInstance(addmm["args"]["Input Dims"], list)
        self.assertIn([8, 16], addmm["args"]["Input Dims"])
        # The worker thread started after import records its ops too (the hook turned them on).
        main_tid = next(e["tid"] for e in events if e["name"] == "Optimizer.step#AdamW.step")
        self.assertTrue(any(e["name"] == "aten::linear" and e["tid"] != main_tid for e in events))
        self.assertForwardBackwardLinks(all_events)
        p = subprocess.run([GPROF_RUN, "check", trace_path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def assertForwardBackwardLinks(self, all_events):
        """torch.profiler's fwdbwd flows (shapes give the ops' sequence numbers): train_loop.py's
        2 steps through 2 nn.Linear layers run aten::addmm forward 4 times with a backward, each
        linked to its AddmmBackward0 with the same "Sequence number"; the worker thread's
        forward (no backward) links nothing."""
        ops = {}  # (tid, ts) -> the ops starting there
        for e in all_events:
            if e.get("ph") == "X" and e.get("cat") == "cpu_op":
                ops.setdefault((e["tid"], e["ts"]), []).append(e)
        ends = {"s": {}, "f": {}}
        for e in all_events:
            if e.get("cat") == "fwdbwd":
                ends[e["ph"]][e["id"]] = ops[(e["tid"], e["ts"])]
        self.assertEqual(set(ends["s"]), set(ends["f"]))
        addmm = []
        for flow, starts in ends["s"].items():
            forward = next((op for op in starts if op["name"] == "aten::addmm"), None)
            if forward is not None:
                backward = next(op for op in ends["f"][flow] if "Fwd thread id" in op["args"])
                self.assertEqual(backward["name"], "AddmmBackward0")
                self.assertEqual(backward["args"]["Sequence number"],
                                 forward["args"]["Sequence number"])
                addmm.append(flow)
        self.assertEqual(len(addmm), 4)

    def test_torch_compile_regions_appear_as_torch_shows_them(self):
        ref = subprocess.run([TORCH_PYTHON, os.path.join(HERE, "compiled.py"), "--torch-profiler"],
                             cwd=HERE, capture_output=True, text=True, timeout=400)
        self.assertEqual(ref.returncode, 0, ref.stderr)
        compiled = lambda name: ("Compiled" in name or "Dynamo" in name) and not name.startswith("aten")
        key = lambda name: "## Call CompiledFxGraph ##" if name.startswith("## Call CompiledFxGraph") else name
        theirs = {key(r["name"]): r["count"]
                  for r in json.loads(ref.stdout.splitlines()[-1])["rows"] if compiled(r["name"])}
        self.assertIn("Torch-Compiled Region: 0/0", theirs)
        self.assertIn("## Call CompiledFxGraph ##", theirs)
        out, p = self.gprof("compiled", [], "compiled.py")
        self.assertIn("compiled calls done", p.stdout)
        rows, _ = self.table(out)
        ours = {key(r["Name"]): int(r["# of Calls"]) for r in rows if compiled(r["Name"])}
        self.assertEqual(ours, theirs)

    # --with-stack: aten::mm from attention() (768x768 through an nn.Linear layer) and from
    # mlp() (512x512 through torch.mm) are two rows, told apart by their source location, and
    # attention's has the larger CPU total. Exact: every call is in some aten::mm row (grouping
    # only splits the rows). Sampled: each group holds at least 80% of its function's calls. The
    # slack: a call whose range got no sample in or near it is "<not sampled>", and one whose
    # nearest sample lay just before it, in the other function's call, is counted there; at
    # 1 kHz with calls of several ms (the GIL is released during mm, so the sampler keeps pace)
    # that is rare, not never.
    def test_with_stack_groups_mm_by_the_python_function_that_called_it(self):
        out, p = self.gprof("with_stack", ["--with-stack"], "source_lines.py")
        calls = json.loads(p.stdout.splitlines()[-1])
        with open(os.path.join(out, "table.txt")) as f:
            text = f.read()
        notes, rows = parse_grouped_table(text)
        self.assertTrue(any("SAMPLED at 1000 Hz, not exact" in n for n in notes), text)
        mm = [r for r in rows if r["Name"] == "aten::mm"]
        self.assertEqual(sum(int(r["# of Calls"]) for r in mm),
                         calls["attention"] + calls["mlp"], text)
        def group(function):  # the function's main group (a stray sample could add another)
            found = [r for r in mm if r["Source Location"] and
                     r["Source Location"][0].endswith("): " + function)]
            self.assertTrue(found, text)
            return max(found, key=lambda r: int(r["# of Calls"]))
        attention, mlp = group("attention"), group("mlp")
        self.assertGreater(us(attention["CPU total"]), us(mlp["CPU total"]), text)
        self.assertGreaterEqual(int(attention["# of Calls"]), 0.8 * calls["attention"], text)
        self.assertGreaterEqual(int(mlp["# of Calls"]), 0.8 * calls["mlp"], text)
        # The program's own lines, not torch's: nn.Module's frames are left out of the key.
        # (A long path is cut at the left to 75 columns, as torch cuts it.)
        self.assertIn("source_lines.py(", attention["Source Location"][0])
        self.assertFalse(any("site-packages/torch" in e for r in mm for e in r["Source Location"]))
        self.assertLessEqual(max(len(r["Source Location"]) for r in rows), 5)
        # The dump and samples re-render grouped by one frame.
        r = subprocess.run([GPROF_RUN, "report", out, "-q", "--group-by-stack", "1"],
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "table.txt")) as f:
            _, rows = parse_grouped_table(f.read())
        self.assertEqual(max(len(r["Source Location"]) for r in rows), 1)

    def test_program_running_torch_profiler_keeps_its_own_output(self):
        plain = subprocess.run([TORCH_PYTHON, os.path.join(HERE, "own_profiler.py")], cwd=HERE,
                               capture_output=True, text=True, timeout=240)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        out, p = self.gprof("own", [], "own_profiler.py")
        self.assertEqual(p.returncode, 0)
        # Its own table: the same rows (names and counts; times differ run to run).
        def shape(text):
            return sorted((r["Name"], r["# of Calls"]) for r in parse_table(text))
        self.assertEqual(shape(p.stdout), shape(plain.stdout))
        self.assertIn("own profiler done", p.stdout)
        self.assertIn("rows with aten::addmm: 1", p.stdout)
        self.assertNotIn("already enabled", p.stderr)
        # The closing line says what happened: one active window of the program's schedule.
        self.assertIn("the program ran torch.profiler 1 time", p.stderr)
        self.assertIn("the program has its own steps", p.stderr)

    def test_hook_hands_cupti_over_to_torch_profiler_and_takes_it_back(self):
        # torch.profiler with CUDA activity takes CUPTI's process-wide buffer callbacks: the hook
        # calls the library's hand-over before Kineto prepares and its take-back after the profile
        # stopped. Both calls must reach the library (its debug lines), in that order, around the
        # program's profile; the CUPTI side is collection_test's Handover.* (stand-in).
        out = os.path.join(self.tmp, "handover")
        env = dict(os.environ, GPROF_LOG_LEVEL="debug")
        p = subprocess.run([GPROF_RUN, "-q", "-o", out, TORCH_PYTHON,
                            os.path.join(HERE, "own_profiler_cuda.py")],
                           cwd=HERE, capture_output=True, text=True, timeout=240, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("own CUDA-activity profile done: True", p.stdout)
        lines = p.stderr.splitlines()
        give = [i for i, l in enumerate(lines) if "CUPTI hand-over requested" in l]
        take = [i for i, l in enumerate(lines) if "CUPTI take-back requested" in l]
        self.assertEqual(len(give), 1, p.stderr)
        self.assertEqual(len(take), 1, p.stderr)
        self.assertLess(give[0], take[0])


if __name__ == "__main__":
    unittest.main()
