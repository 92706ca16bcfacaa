"""What a PyTorch user meets first in gprof-run's steps, on an unmodified training loop
(train_dataloader.py: a small MLP, a DataLoader with two workers, AdamW, an LR scheduler; on the
CPU) and on train_loop.py under a schedule:

- ProfilerStep#0 holds the first iteration, not the start-up (interpreter, `import torch`, data
  and model set-up), which the closing line reports as a phase of its own;
- the closing line reports no loss: gprof-run's own last step ends at exit, and ranges that a
  schedule window's edges cut (torch's Optimizer.step, which the step boundary falls inside) end
  at the edge without counting as lost;
- the ProfilerStep* row stays within 100% of the CPU time;
- a program that numbers its own steps (prof.step() of its own torch.profiler,
  own_profiler_steps.py) gets windows named by its numbers, each holding exactly the steps it
  names, and a closing line that names the steps its own profiler had.

Environment: TORCH_PYTHON (a Python with torch), GPROF_RUN (the gprof-run under test).
"""
import glob
import json
import os
import re
import statistics
import subprocess
import unittest

from test_torch_e2e import cut, parse_table
from torch_runner import GPROF_RUN, GprofTorchCase, needs_torch

BATCHES = 30

# How much longer than the median step ProfilerStep#0 may be. Step 0 is the loop's first
# iteration, as the ProfilerStep#0 of a program that calls prof.step() in its loop is, and that
# iteration pays one-off costs the others do not: the first matmuls start MKL/oneDNN and the
# OpenMP pool (10 to 60 ms per first call here), AdamW creates its state. Measured over four runs
# on the 2-core test machine (shared): 1.2x to 54x the median of a ~2.5 ms step. The start-up
# that step 0 used to hold (the interpreter, `import torch`, data and model set-up) took 1.3 to
# 2.9 s there, over 500x. 150x sits between the two with room on both sides; the test also
# checks, without timing, that step 0 holds exactly one iteration and none of the set-up's ops.
STEP0_FACTOR = 150


def closing_line(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("gprof-run: recorded ")]
    if len(lines) != 1:
        raise AssertionError("no closing line in:\n" + stderr)
    return lines[0]


def step_events(trace_path):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    steps = {}
    for e in events:
        m = re.fullmatch(r"ProfilerStep#(\d+)", e.get("name", ""))
        if m and e.get("ph") == "X":
            steps[int(m.group(1))] = e
    return steps, events


@needs_torch
class TorchSteps(GprofTorchCase):
    def test_step_0_is_one_iteration_within_150x_the_median_step_and_no_loss(self):
        out, p = self.gprof("dataloader", [], "train_dataloader.py", str(BATCHES))
        self.assertIn("trained %d batches" % BATCHES, p.stdout)
        steps, events = step_events(os.path.join(out, "trace.json"))
        # One range per step: #0 from the first forward, one per optimizer.step(), the last
        # from the last optimizer.step() to the exit.
        self.assertEqual(sorted(steps), list(range(BATCHES + 1)))
        # Step 0 holds one iteration: one forward through the two Linear layers, one optimizer
        # step, and none of the set-up's ops (the data set's randn, the layers' uniform_ init).
        begin, end = steps[0]["ts"], steps[0]["ts"] + steps[0]["dur"]
        in_step0 = {}
        for e in events:
            if e.get("ph") == "X" and begin <= e["ts"] < end:
                in_step0[e["name"]] = in_step0.get(e["name"], 0) + 1
        self.assertEqual(in_step0.get("aten::linear"), 2, in_step0)
        self.assertEqual(in_step0.get("Optimizer.step#AdamW.step"), 1, in_step0)
        self.assertNotIn("aten::randn", in_step0)
        self.assertNotIn("aten::uniform_", in_step0)
        middle = [steps[n]["dur"] for n in range(1, BATCHES)]
        median = statistics.median(middle)
        self.assertLess(steps[0]["dur"], STEP0_FACTOR * median,
                        "ProfilerStep#0 %.0f us, median step %.0f us" % (steps[0]["dur"], median))
        line = closing_line(p.stderr)
        self.assertIn("no losses", line)
        self.assertNotIn("LOSSES", line)
        # The start-up is reported on its own: it ends where ProfilerStep#0 begins.
        m = re.search(r"start-up ([0-9.]+)(s|ms|us) before ProfilerStep#0 \(in no step\)", line)
        self.assertIsNotNone(m, line)
        with open(os.path.join(out, "trace.json")) as f:
            counters = json.load(f)["gprof"]["counters"]
        self.assertEqual(counters["nvtx_ranges_open_at_end"], 0)
        self.assertEqual(counters["nvtx_unmatched_pops"], 0)

    def test_profiler_step_row_stays_within_100_percent_of_cpu_time(self):
        out, _ = self.gprof("percent", [], "train_dataloader.py", str(BATCHES))
        with open(os.path.join(out, "table.txt")) as f:
            rows = {r["Name"]: r for r in parse_table(f.read())}
        step = rows["ProfilerStep*"]
        self.assertEqual(int(step["# of Calls"]), BATCHES + 1)
        for column in ("Self CPU %", "CPU total %"):
            self.assertLessEqual(float(step[column].rstrip("%")), 100.0, step)

    def test_windows_cut_ranges_at_their_edges_without_losses(self):
        # --wait 1 --warmup 1 --active 2 --repeat 2 on 12 optimizer steps: windows steps 2-3 and
        # 6-7. Each window's edges fall inside torch's Optimizer.step range (the step boundary is
        # its post hook): the one that begins in the window ends at the window's end, marked as
        # cut there, and the one that began before it is not an unmatched pop.
        out, p = self.gprof("windows", ["--wait", "1", "--warmup", "1", "--active", "2",
                                        "--repeat", "2"], "train_loop.py", "12")
        traces = sorted(glob.glob(os.path.join(out, "*.cycle*.steps*.trace.json")))
        self.assertEqual([re.search(r"steps\d+-\d+", t).group(0) for t in traces],
                         ["steps2-3", "steps6-7"])
        for path in traces:
            with self.subTest(window=os.path.basename(path)):
                _, events = step_events(path)
                with open(path) as f:
                    trace = json.load(f)
                counters = trace["gprof"]["counters"]
                self.assertEqual(counters["nvtx_unmatched_pops"], 0)
                self.assertEqual(counters["nvtx_ranges_open_at_end"], 0)
                # The window's end on the trace's time axis (us after baseTimeNanoseconds).
                window_end = (trace["gprof"]["end_ns"] - trace["baseTimeNanoseconds"]) / 1000.0
                opt = sorted((e for e in events if e.get("ph") == "X"
                              and e["name"] == "Optimizer.step#AdamW.step"), key=lambda e: e["ts"])
                self.assertEqual(len(opt), 2)
                self.assertTrue(opt[-1].get("args", {}).get("cut at window end"), opt[-1])
                self.assertAlmostEqual(opt[-1]["ts"] + opt[-1]["dur"], window_end, delta=0.002)
                self.assertNotIn("cut at window end", opt[0].get("args", {}))
        line = closing_line(p.stderr)
        self.assertIn("no losses", line)

    def test_windows_are_named_by_the_programs_own_steps_and_hold_exactly_them(self):
        # own_profiler_steps.py: a forward before its loop (gprof-run's own ProfilerStep#0), then
        # its torch.profiler, schedule wait=1 warmup=1 active=3 repeat=1, over 12 iterations:
        # its #0 to #11 and an empty #12; its profiler has the ops of #2, #3 and #4. gprof-run's
        # schedule counts the program's numbers: cycle 0 would be steps 2-4, which the program's
        # profiler had (no window); cycle 1 is steps 7-9: one window, holding #7, #8 and #9
        # whole (one optimizer step each) and nothing of #6 or #10.
        out, p = self.gprof("own_steps", ["--wait", "1", "--warmup", "1", "--active", "3",
                                          "--repeat", "2"], "own_profiler_steps.py", "12")
        traces = glob.glob(os.path.join(out, "*.cycle*.steps*.trace.json"))
        self.assertEqual([re.search(r"cycle\d+\.steps\d+-\d+", t).group(0) for t in traces],
                         ["cycle1.steps7-9"])
        steps, events = step_events(traces[0])
        self.assertEqual(sorted(steps), [7, 8, 9])
        with open(traces[0]) as f:
            gprof = json.load(f)["gprof"]
        self.assertEqual((gprof["first_step"], gprof["last_step"]), (7, 9))
        opt = [e for e in events if e.get("ph") == "X" and e["name"] == "Optimizer.step#AdamW.step"]
        self.assertEqual(len(opt), 3)
        self.assertEqual(steps[7]["ts"], 0)  # the window begins with #7
        line = closing_line(p.stderr)
        self.assertIn("steps 2-4 ran under the program's own torch.profiler: their ops went to "
                      "it, not to gprof-run", line)
        self.assertIn("no losses", line)
        # nvtx_sum counts each op as the table does: torch's aten::div_ that redispatches to
        # itself (two nested ranges, one op) is one instance, not two.
        stats = subprocess.run([GPROF_RUN, "stats", "--report", "nvtx_sum", "--format", "json",
                                traces[0].replace(".trace.json", ".gpdump")],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(stats.returncode, 0, stats.stderr)
        nvtx = {}
        for row in json.loads(stats.stdout)["nvtx_sum"]:
            if row["Style"] == "PushPop" and not row["Range"].startswith("ProfilerStep#"):
                nvtx[cut(row["Range"])] = nvtx.get(cut(row["Range"]), 0) + int(row["Instances"])
        table = {}
        with open(traces[0].replace(".trace.json", ".table.txt")) as f:
            for r in parse_table(f.read()):
                if r["Name"] != "ProfilerStep*":
                    table[cut(r["Name"])] = table.get(cut(r["Name"]), 0) + int(r["# of Calls"])
        self.assertIn("aten::div_", nvtx)
        self.assertEqual(nvtx, table)


if __name__ == "__main__":
    unittest.main()
