#!/usr/bin/env python3
"""Unit tests of the gpu-check helpers on small hand-written traces (no GPU, no torch).

Run: python3 -m unittest discover -s scripts/gpu_check -p 'test_*.py'
"""

import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import examples_check  # noqa: E402
import launch_overhead  # noqa: E402
import torch_compare  # noqa: E402
from kineto_trace import Trace, api_kind  # noqa: E402
from report import FAIL, PASS, SKIP, Report  # noqa: E402
from runner import Runner  # noqa: E402

BUILD = os.environ.get("GPU_CHECK_BUILD_DIR", "")


def api(name, corr, ts, cat="cuda_runtime"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 2,
            "args": {"correlation": corr}}


def gpu(name, corr, ts, dur=5.0, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "stream": 7}}


def step(n, ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1, "tid": 1,
            "ts": ts, "dur": dur}


class TraceFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, events, gprof=None, name="t.json"):
        path = os.path.join(self.dir.name, name)
        doc = {"schemaVersion": 1}
        if gprof is not None:
            doc["gprof"] = gprof
        doc["traceEvents"] = events
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path


class CorrelationTest(TraceFiles):
    def test_fully_correlated_trace_has_no_problems(self):
        t = Trace(self.write([api("cudaLaunchKernel", 1, 0), gpu("k", 1, 10),
                              api("cudaMemcpyAsync", 2, 3), gpu("Memcpy HtoD", 2, 20,
                                                                cat="gpu_memcpy")]))
        self.assertEqual(t.correlation_problems(), (0, []))
        self.assertEqual(t.count("kernel"), 1)
        self.assertEqual(t.count("gpu_memcpy"), 1)

    def test_kernel_without_its_launch_is_reported(self):
        t = Trace(self.write([api("cudaLaunchKernel", 1, 0), gpu("k", 1, 10), gpu("orphan", 9, 30)]))
        n, msgs = t.correlation_problems()
        self.assertEqual(n, 1)
        self.assertIn("orphan", msgs[0])

    def test_launch_without_its_kernel_is_reported(self):
        t = Trace(self.write([api("__cudaLaunchKernel", 1, 0), api("cuLaunchKernel", 2, 5,
                                                                   cat="cuda_driver"),
                              gpu("k", 1, 10)]))
        n, msgs = t.correlation_problems()
        self.assertEqual(n, 1)
        self.assertIn("cuLaunchKernel", msgs[0])

    def test_correlation_shared_by_two_api_calls_is_reported(self):
        t = Trace(self.write([api("cudaLaunchKernel", 1, 0), api("cuLaunchKernel", 1, 1,
                                                                 cat="cuda_driver"),
                              gpu("k", 1, 10)]))
        self.assertGreaterEqual(t.correlation_problems()[0], 1)

    def test_api_kinds(self):
        self.assertEqual(api_kind("cudaLaunchKernel"), "kernel")
        self.assertEqual(api_kind("cudaLaunchKernelExC"), "kernel")
        self.assertEqual(api_kind("cudaGraphLaunch"), None)
        self.assertEqual(api_kind("cudaMemcpyAsync"), "memcpy")
        self.assertEqual(api_kind("cudaMemsetAsync"), "memset")
        self.assertEqual(api_kind("cudaStreamSynchronize"), None)

    def test_loss_counters_found_and_nonzero_ones_visible(self):
        t = Trace(self.write([], gprof={"counters": {"cupti_dropped_records": 3,
                                                     "host_events_dropped": 0,
                                                     "nvtx_ranges_open_at_end": 2}}))
        self.assertEqual(t.loss_counters(), {"counters.cupti_dropped_records": 3,
                                             "counters.host_events_dropped": 0})


class StepsTest(TraceFiles):
    def steps_trace(self, second_step_kernel="b", name="t.json"):
        return Trace(self.write([
            step(0, 0, 100), step(1, 100, 100),
            api("cudaLaunchKernel", 1, 10), gpu("_Z3fooi", 1, 20, dur=4),
            api("cudaLaunchKernel", 2, 110), gpu(second_step_kernel, 2, 130, dur=6),
            gpu("a-kernel-without-launch", 3, 150, dur=1),
            api("cudaLaunchKernel", 4, 500), gpu("warm-up", 4, 510),
        ], name=name))

    def test_kernels_are_assigned_to_the_step_of_their_launch(self):
        names, times, outside = self.steps_trace().kernels_by_step()
        self.assertEqual(dict(names[0]), {"foo(int)": 1})
        self.assertEqual(dict(names[1]), {"b": 1, "a-kernel-without-launch": 1})
        self.assertAlmostEqual(times[1]["b"], 6.0)
        self.assertEqual(outside, 1)

    def test_narrowest_step_span_wins_when_a_step_is_written_twice(self):
        t = Trace(self.write([
            step(0, 0, 100), step(1, 100, 100),
            step(1, 0, 200),  # a wider span with another number (e.g. from step detection)
            api("cudaLaunchKernel", 1, 10), gpu("a", 1, 20),
            api("cudaLaunchKernel", 2, 110), gpu("b", 2, 130),
        ]))
        names, _, _ = t.kernels_by_step()
        self.assertEqual(dict(names[0]), {"a": 1})
        self.assertEqual(dict(names[1]), {"b": 1})

    def test_compare_steps_passes_on_equal_and_fails_on_different_traces(self):
        r = Report("t")
        s = r.section("same")
        torch_compare.compare_steps(s, self.steps_trace(name="a.json"),
                                    self.steps_trace(name="b.json"), 2)
        self.assertEqual([c for c, _ in s.checks], [PASS, PASS, PASS])
        s2 = r.section("different")
        torch_compare.compare_steps(s2, self.steps_trace(name="a.json"),
                                    self.steps_trace("c", name="c.json"), 2)
        self.assertEqual(s2.checks[-1][0], FAIL)
        self.assertIn("1/2 steps", s2.checks[-1][1])
        self.assertIn("first differing step 1", s2.checks[-1][1])

    def test_compare_times_judges_the_five_percent_band(self):
        s = Report("t").section("times")
        torch_compare.compare_times(s, {0: {"k": 100.0, "tiny": 1.0}},
                                    {0: {"k": 104.0, "tiny": 2.0}})
        self.assertEqual(s.checks[0][0], PASS)
        self.assertIn("1/1 kernels", s.checks[0][1])
        s = Report("t").section("times")
        torch_compare.compare_times(s, {0: {"k": 100.0}}, {0: {"k": 110.0}})
        self.assertEqual(s.checks[0][0], FAIL)


class ParsingTest(unittest.TestCase):
    def test_expected_counts_from_the_example_output(self):
        counts, source = examples_check.expected_counts(
            "GPROF_EXAMPLE_DONE multithread\nkernels=4 copies=2\nkernels=4 copies=2\n",
            ["multithread"])
        self.assertEqual(counts, {"kernels": 8, "copies": 4})
        self.assertIn("printed", source)

    def test_printed_loop_time(self):
        self.assertAlmostEqual(launch_overhead.printed_loop_seconds("loop_us=1500.5\n"),
                               0.0015005)
        self.assertIsNone(launch_overhead.printed_loop_seconds("GPROF_EXAMPLE_DONE x\n"))

    def test_report_fails_when_any_line_fails(self):
        r = Report("t")
        r.section("a").check(True, "fine")
        self.assertFalse(r.failed())
        r.section("b").check(False, "broken")
        self.assertTrue(r.failed())
        self.assertIn("**Result: FAIL**", r.render())
        self.assertIn("- **FAIL** broken", r.render())


# A stand-in for "python with torch" so that the step-3 flow (runs, result files, trace parsing,
# comparison, overhead table) runs on the CUDA/CUPTI stand-in: its gprof mode runs matmul_bias
# (ten NVTX steps "ProfilerStep#N", two kernels each); its torch mode writes the Kineto trace that
# torch.profiler would write for the same steps.
FAKE_PYTHON = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, sys
    if sys.argv[1] == "-c":
        print("2.11.0+fake 13.0"); sys.exit(0)
    a = sys.argv[2:]
    opt = lambda k: a[a.index(k) + 1] if k in a else ""
    mode, steps = opt("--mode"), int(opt("--steps") or 10)
    if mode == "gprof":
        os.spawnv(os.P_WAIT, os.environ["FAKE_MATMUL"], ["matmul_bias", "64", str(steps)])
    if mode == "torch":
        ev, corr = [], 0
        for s in range(steps):
            t0 = 1000.0 * s
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                       "pid": 1, "tid": 1, "ts": t0, "dur": 900.0})
            for k, name in enumerate(["_Z13matmul_kernelPKfS0_Pfi", "_Z15bias_add_kernelPfPKfi"]):
                corr += 1
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": t0 + 10 + k, "dur": 1,
                           "args": {"correlation": corr}})
                ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                           "ts": t0 + 20 + 10 * k, "dur": 5.0, "args": {"correlation": corr}})
        json.dump({"traceEvents": ev}, open(opt("--trace"), "w"))
    json.dump({"step_seconds": [0.001] * steps, "measured_seconds": 0.001 * steps},
              open(opt("--result"), "w"))
    """)


@unittest.skipUnless(BUILD and os.path.exists(os.path.join(BUILD, "tests", "cudasim", "lib")),
                     "set GPU_CHECK_BUILD_DIR to a build with the stand-in")
class TorchCompareFlowOnStandIn(unittest.TestCase):
    def test_step_three_flow_compares_steps_from_both_traces(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "python")
            with open(fake, "w", encoding="utf-8") as f:
                f.write(FAKE_PYTHON)
            os.chmod(fake, stat.S_IRWXU)
            runner = Runner(BUILD, True, d)
            os.environ["FAKE_MATMUL"] = runner.bin("matmul_bias")
            s = Report("t").section("3")
            torch_compare.run(runner, s, fake, steps=10, warmup=1)
            text = "\n".join(f"{st} {msg}" for st, msg in s.checks)
            self.assertNotIn("crashed", text)
            self.assertIn("PASS kernel names and counts match in 10/10 steps (2 kernels per step)",
                          text)
            self.assertIn("PASS gprof-run lost no records", text)
            self.assertIn("| gprof-run |", "\n".join(s.lines))


class TorchMissing(unittest.TestCase):
    def test_missing_torch_is_a_skip_on_the_standin_and_a_failure_on_a_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            for standin, want in ((True, SKIP), (False, FAIL)):
                s = Report("t").section("3")
                torch_compare.run(Runner(d, standin, d), s, "/nonexistent/python")
                self.assertEqual(s.checks[0][0], want)
                if standin:
                    self.assertIn("skipped: torch not importable", s.checks[0][1])


if __name__ == "__main__":
    unittest.main()
