"""TensorBoard's profiler plugin reads gprof-run's trace of an unmodified PyTorch loop, and its
overview's step-time breakdown is ours (findings.json step_breakdown, as `stats --by-step`).

The run: torch_dataloader_test's heavy DataLoader loop (tests/torch/dataloader_loop.py, torch on
the CPU: 12 steps whose DataLoader computes in __getitem__ on the training thread), kept in
TORCH_OUTPUTS/dataloader_heavy.

Compared, per step, to 0.01 us (both read the same ranges, written to the nanosecond): the
step's total, DataLoader, CPU Exec and Other; Kernel, Memcpy, Memset and Runtime are 0 on both
sides (torch on the CPU launches no GPU work; the stand-in test compares Kernel and Memcpy).

The plugin (0.4.3) keeps of the `user_annotation` ranges only steps and collectives
(trace.create_trace_event), so on a torch 2.x trace it sees neither the DataLoader's
`enumerate(DataLoader)#...__next__` ranges nor `Optimizer.step#...`: torch.profiler itself
writes them as user_annotation, as gprof-run does. Its overview rule counts them where it gets
them (event_parser.StepParser: a DataLoader range as an operator or user annotation), so the
DataLoader slice and CPU Exec are compared on a copy of the trace in which those ranges are
cpu_op, the category the plugin reads; the totals on the trace as written.
"""
import copy
import os
import unittest

from consumers import load_json, needs_consumers, tensorboard_steps, torch_output

TOLERANCE_US = 0.01


@needs_consumers
class TensorBoardPluginReadsTheTorchTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = torch_output("dataloader_heavy")
        cls.trace = load_json(os.path.join(out, "trace.json"))
        breakdown = load_json(os.path.join(out, "findings.json"))["step_breakdown"]
        cls.ours = {s["step"]: s for s in breakdown}

    def assertClose(self, theirs, ours, what):
        self.assertAlmostEqual(theirs, ours, delta=TOLERANCE_US, msg=what)

    def test_steps_and_their_totals_are_ours(self):
        plugin = tensorboard_steps(self.trace)
        # 12 batches: ProfilerStep#0..11 from the optimizer's steps, and #12 from the last
        # step() to the end of the loop.
        self.assertEqual([int(n) for n, _ in plugin], sorted(self.ours))
        self.assertEqual(sorted(self.ours), list(range(13)))
        for name, costs in plugin:
            o = self.ours[int(name)]
            self.assertClose(costs["Total"], o["wall_us"], "step %s total" % name)
            for role in ("Kernel", "Memcpy", "Memset", "Runtime"):
                self.assertEqual(costs[role], 0, role)
                self.assertEqual(o[role.lower() + "_us"], 0, role)

    def test_dataloader_cpu_exec_and_other_slices_are_ours(self):
        trace = copy.deepcopy(self.trace)
        relabelled = 0
        for e in trace["traceEvents"]:
            if (e.get("cat") == "user_annotation" and e.get("ph") == "X"
                    and not e["name"].startswith("ProfilerStep#")):
                e["cat"] = "cpu_op"
                relabelled += "DataLoader" in e["name"]
        self.assertGreaterEqual(relabelled, 12)  # one __next__ per batch, and the last one
        plugin = dict(tensorboard_steps(trace))
        for step, o in self.ours.items():
            costs = plugin[str(step)]
            self.assertClose(costs["DataLoader"], o["dataloader_us"], "step %d DataLoader" % step)
            self.assertClose(costs["CpuOp"], o["cpu_exec_us"], "step %d CPU Exec" % step)
            self.assertClose(costs["Other"], o["other_us"], "step %d Other" % step)
        # The loader computes in every step after the first (whose batch came before it).
        self.assertTrue(all(self.ours[s]["dataloader_us"] > 0 for s in range(1, 12)))


if __name__ == "__main__":
    unittest.main()
