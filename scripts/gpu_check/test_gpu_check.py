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

import collections  # noqa: E402
import time  # noqa: E402

import clock_skew  # noqa: E402
import cupti_life_check  # noqa: E402
import examples_check  # noqa: E402
import gpu_work_check  # noqa: E402
import launch_overhead  # noqa: E402
import no_record_copies_check  # noqa: E402
import torch_compare  # noqa: E402
import torch_inside_check  # noqa: E402
import torch_memory_check  # noqa: E402
import torch_ops_check  # noqa: E402
import windows_check  # noqa: E402
from kineto_trace import Trace, api_kind  # noqa: E402
from report import FAIL, PASS, SKIP, WARN, Report  # noqa: E402
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
                                    [self.steps_trace(name="b.json"),
                                     self.steps_trace(name="b2.json")], 2)
        self.assertEqual([c for c, _ in s.checks], [PASS, PASS, PASS])
        s2 = r.section("different")
        # gprof-run has "b" in step 1 where both references have "c": it lacks a kernel.
        torch_compare.compare_steps(s2, self.steps_trace(name="a.json"),
                                    [self.steps_trace("c", name="c.json"),
                                     self.steps_trace("c", name="c2.json")], 2)
        self.assertIn(FAIL, [c for c, _ in s2.checks])
        self.assertIn("match the reference in 1/2 steps", s2.checks[2][1])
        self.assertIn("lacks kernels the reference has in 1 step(s) — first: step 1",
                      s2.checks[3][1])

    def test_one_reference_run_is_a_warning_about_the_reference(self):
        s = Report("t").section("one")
        torch_compare.compare_steps(s, self.steps_trace(name="a.json"),
                                    [self.steps_trace(name="b.json")], 2)
        self.assertEqual([c for c, _ in s.checks], [WARN, PASS, PASS])
        self.assertIn("only one torch.profiler run", s.checks[0][1])


def C(**kw):
    return collections.Counter(kw)


class ReferenceTest(unittest.TestCase):
    """The reference-vs-reference and gprof-run-vs-reference verdicts on hand-made step
    multisets. Three steps; the loop launches a, a, b in every step."""
    FULL = C(a=2, b=1)

    def steps(self, *per_step):
        return {i: c for i, c in enumerate(per_step)}

    def test_two_agreeing_runs_pass(self):
        st, text = torch_compare.reference_agreement([self.steps(self.FULL, self.FULL),
                                                      self.steps(self.FULL, self.FULL)], 2)
        self.assertEqual(st, PASS)
        self.assertIn("agree with each other in all 2 steps (3 kernels per step)", text)

    def test_runs_that_disagree_warn_and_name_the_step(self):
        st, text = torch_compare.reference_agreement(
            [self.steps(C(a=1, b=1), self.FULL), self.steps(self.FULL, self.FULL)], 2)
        self.assertEqual(st, WARN)
        self.assertIn("disagree in 1/2 steps", text)
        self.assertIn("first: step 0: run 1 2 kernels, run 2 3", text)

    def test_one_short_reference_run_is_covered_by_the_other(self):
        # Run 1 lost an `a` in step 0; run 2 has it: the reference (max) is complete.
        g = self.steps(self.FULL, self.FULL, self.FULL)
        refs = [self.steps(C(a=1, b=1), self.FULL, self.FULL),
                self.steps(self.FULL, self.FULL, self.FULL)]
        checks = torch_compare.judge_kernel_sets(g, refs, 3)
        self.assertEqual([c for c, _ in checks], [PASS, PASS])
        self.assertIn("3/3 steps (3 kernels per step in gprof-run)", checks[1][1])

    def test_a_reference_short_in_both_runs_is_a_warning_not_a_failure(self):
        # Both runs lost the `b` of step 0 (Kineto's start-up loss); gprof-run has it, as in
        # its other steps.
        g = self.steps(self.FULL, self.FULL, self.FULL)
        refs = [self.steps(C(a=2), self.FULL, self.FULL)] * 2
        checks = torch_compare.judge_kernel_sets(g, refs, 3)
        self.assertEqual([c for c, _ in checks], [PASS, WARN, WARN])
        self.assertIn("match the reference in 2/3 steps", checks[1][1])
        self.assertIn("short by 1 kernel(s) in 1 step(s)", checks[2][1])
        self.assertIn("not a gprof-run failure", checks[2][1])

    def test_a_reference_with_an_empty_step_is_short(self):
        g = self.steps(self.FULL, self.FULL)
        refs = [self.steps(C(), self.FULL)] * 2
        checks = torch_compare.judge_kernel_sets(g, refs, 2)
        self.assertEqual([c for c, _ in checks], [PASS, WARN, WARN, WARN])
        self.assertIn("kernels in only 1/2 steps", checks[1][1])

    def test_gprof_run_missing_a_kernel_fails(self):
        g = self.steps(self.FULL, C(a=1, b=1), self.FULL)
        refs = [self.steps(self.FULL, self.FULL, self.FULL)] * 2
        checks = torch_compare.judge_kernel_sets(g, refs, 3)
        self.assertEqual([c for c, _ in checks], [PASS, FAIL, FAIL])
        self.assertIn("lacks kernels the reference has in 1 step(s) — first: step 1", checks[2][1])

    def test_gprof_run_with_an_extra_kernel_unlike_its_other_steps_fails(self):
        g = self.steps(self.FULL, C(a=2, b=2), self.FULL)
        refs = [self.steps(self.FULL, self.FULL, self.FULL)] * 2
        checks = torch_compare.judge_kernel_sets(g, refs, 3)
        self.assertEqual([c for c, _ in checks], [PASS, FAIL, FAIL])
        self.assertIn("neither the reference nor its own other steps", checks[2][1])

    def test_gprof_run_without_kernels_in_a_step_fails(self):
        g = self.steps(self.FULL, C())
        refs = [self.steps(self.FULL, self.FULL)] * 2
        checks = torch_compare.judge_kernel_sets(g, refs, 2)
        self.assertEqual(checks[0][0], FAIL)
        self.assertIn("(found 1)", checks[0][1])

    def test_times_within_ten_percent_of_the_reference_mean_pass(self):
        # k: gprof-run 10 launches, 1050 us -> 105 us/launch; references 100 and 102 -> mean 101:
        # +4.0%. tiny: 5 us in total, under MIN_JUDGED_US: listed, not judged.
        g = {"k": (10, 1050.0), "tiny": (10, 5.0)}
        refs = [{"k": (10, 1000.0), "tiny": (10, 4.0)}, {"k": (10, 1020.0), "tiny": (10, 6.0)}]
        rows, checks = torch_compare.judge_times(g, refs)
        self.assertEqual([c for c, _ in checks], [PASS])
        self.assertIn("within 10% of the reference for 1/1 kernels", checks[0][1])
        self.assertEqual(rows[0][4], "+4.0%")
        self.assertEqual(rows[1][-1], "no (tiny)")

    def test_times_outside_ten_percent_fail(self):
        g = {"k": (10, 1120.0)}                       # 112 us vs 100: +12%
        refs = [{"k": (10, 1000.0)}, {"k": (10, 1000.0)}]
        _, checks = torch_compare.judge_times(g, refs)
        self.assertEqual(checks[0][0], FAIL)
        self.assertIn("+12.0%", checks[0][1])

    def test_a_reference_loss_does_not_skew_the_time_per_launch(self):
        # Reference run 1 lost 2 of 10 launches: 800 us / 8 = 100 us per launch, as run 2.
        g = {"k": (10, 1000.0)}
        refs = [{"k": (8, 800.0)}, {"k": (10, 1000.0)}]
        _, checks = torch_compare.judge_times(g, refs)
        self.assertEqual(checks[0][0], PASS)

    def test_kernels_whose_references_disagree_are_not_judged(self):
        g = {"k": (10, 2000.0), "j": (10, 1000.0)}   # k: refs 100 and 125 us: spread 22%
        refs = [{"k": (10, 1000.0), "j": (10, 1000.0)}, {"k": (10, 1250.0), "j": (10, 1000.0)}]
        rows, checks = torch_compare.judge_times(g, refs)
        self.assertEqual([c for c, _ in checks], [PASS, WARN])
        self.assertIn("for 1/1 kernels", checks[0][1])
        self.assertIn("1 kernel(s) not judged", checks[1][1])
        self.assertEqual([r[-1] for r in rows], ["no (references differ)", "yes"])

    def test_kernel_stats_sum_over_the_measured_steps_only(self):
        names = {0: C(k=1), 1: C(k=2), 5: C(k=9)}
        times = {0: {"k": 10.0}, 1: {"k": 30.0}, 5: {"k": 99.0}}
        self.assertEqual(torch_compare.kernel_stats(names, times, 2), {"k": (3, 40.0)})


class ClockSkewTest(TraceFiles):
    def test_summary_of_hand_made_offsets(self):
        s = clock_skew.summarize([10.0, -60.0, 3.0, 0.0, -6.0])
        # sorted: -60, -6, 0, 3, 10; p99 nearest rank = ceil(4.95) = 5th value
        self.assertEqual((s["n"], s["min"], s["median"], s["p99"], s["max"]),
                         (5, -60.0, 0.0, 10.0, 10.0))
        self.assertEqual((s["early_warn"], s["early_fail"]), (2, 1))
        st, text = clock_skew.verdict(s)
        self.assertEqual(st, FAIL)
        self.assertIn("min -60.0 us, median +0.0 us, p99 +10.0 us", text)
        self.assertIn("2 start more than 5 us before their launch call, 1 more than 50 us", text)

    def test_verdicts_at_the_thresholds(self):
        self.assertEqual(clock_skew.verdict(clock_skew.summarize([-5.0, 1.0, 2.0]))[0], PASS)
        self.assertEqual(clock_skew.verdict(clock_skew.summarize([-5.5, 1.0, 2.0]))[0], WARN)
        self.assertEqual(clock_skew.verdict(clock_skew.summarize([-50.0, 1.0]))[0], WARN)
        self.assertEqual(clock_skew.verdict(clock_skew.summarize([-50.5, 1.0]))[0], FAIL)
        self.assertEqual(clock_skew.verdict(clock_skew.summarize([]))[0], WARN)

    def test_percentile_nearest_rank(self):
        v = [float(i) for i in range(1, 101)]
        self.assertEqual(clock_skew.percentile(v, 99), 99.0)
        self.assertEqual(clock_skew.percentile(v, 50), 50.0)
        self.assertEqual(clock_skew.percentile([7.0], 99), 7.0)
        self.assertIsNone(clock_skew.percentile([], 99))

    def test_histogram_bins(self):
        h = dict(clock_skew.histogram([-60.0, -6.0, -1.0, 0.0, 4.9, 5.0, 150.0, 20000.0]))
        self.assertEqual(h["< -50"], 1)
        self.assertEqual(h["[-50, -5)"], 1)
        self.assertEqual(h["[-5, 0)"], 1)
        self.assertEqual(h["[0, 5)"], 2)
        self.assertEqual(h["[5, 20)"], 1)
        self.assertEqual(h["[100, 1000)"], 1)
        self.assertEqual(h[">= 10000"], 1)
        self.assertEqual(sum(h.values()), 8)

    def test_offsets_from_a_trace(self):
        t = Trace(self.write([api("cudaLaunchKernel", 1, 100.0), gpu("k", 1, 103.5),
                              api("cudaMemcpyAsync", 2, 200.0),
                              gpu("Memcpy HtoD", 2, 190.0, cat="gpu_memcpy"),
                              gpu("orphan", 9, 50.0)]))
        self.assertEqual(sorted(t.launch_offsets()), [-10.0, 3.5])

    def test_run_reports_the_whole_set_and_a_row_per_trace(self):
        a = self.write([api("cudaLaunchKernel", 1, 100.0), gpu("k", 1, 40.0)], name="a.json")
        b = self.write([api("cudaLaunchKernel", 1, 100.0), gpu("k", 1, 102.0)], name="b.json")
        s = Report("t").section("skew")
        total = clock_skew.run(s, [("a", a), ("b", b), ("gone", "")])
        self.assertEqual(s.checks[0][0], FAIL)  # a's kernel starts 60 us before its launch
        self.assertEqual(total["n"], 2)
        self.assertIn("| a | 1 | -60.0 |", "\n".join(s.lines))


def window(cycle, first, last, kernels, incomplete=0, errors=0, partial=False):
    return {"cycle": cycle, "first": first, "last": last, "kernels": kernels, "partial": partial,
            "counters": {"gpu_records_incomplete": incomplete, "cupti_errors": errors}}


class WindowsTest(TraceFiles):
    TINY = C(tiny=1)

    def test_kernels_in_steps_counts_step_zero_like_the_others(self):
        # A matching launch ends its step and belongs to it: step 0 holds the first launch.
        self.assertEqual(windows_check.kernels_in_steps(0, 99, self.TINY), C(tiny=100))
        self.assertEqual(windows_check.kernels_in_steps(0, 99, self.TINY, C()), C(tiny=99))
        self.assertEqual(windows_check.kernels_in_steps(100, 199, self.TINY), C(tiny=100))
        self.assertEqual(windows_check.kernels_in_steps(1, 2, C(a=1, b=1)), C(a=2, b=2))

    def test_three_right_windows_pass(self):
        ws = [window(0, 0, 99, C(tiny=100)), window(1, 100, 199, C(tiny=100)),
              window(2, 200, 299, C(tiny=100))]
        checks, rows = windows_check.judge_windows(ws, 3, self.TINY)
        self.assertEqual([c for c, _ in checks], [PASS, PASS, PASS, PASS])
        self.assertIn("(100, 100, 100)", checks[1][1])
        self.assertIn("gpu_records_incomplete and cupti_errors 0 in every window", checks[2][1])
        self.assertEqual(rows[1], [1, "100-199", 100, 100, 0, 0, "-", "no", "ok"])

    def test_a_kernel_in_the_wrong_window_fails(self):
        # The last kernel of window 0 was still queued when it was cut and went to window 1.
        ws = [window(0, 0, 99, C(tiny=99)), window(1, 100, 199, C(tiny=101)),
              window(2, 200, 299, C(tiny=100))]
        checks, _ = windows_check.judge_windows(ws, 3, self.TINY)
        self.assertEqual(checks[1][0], FAIL)
        self.assertIn("cycle 0 steps 0-99: {tiny: 99} (expected {tiny: 100})", checks[1][1])

    def test_wrong_counts_name_the_window_losses_and_other_losses_warn(self):
        w = window(0, 1, 2, C(a=1, b=2))
        w["losses"] = {"gpu_launches_without_records": 1, "window_starts_late": 1}
        checks, rows = windows_check.judge_windows([w], 1, C(a=1, b=1))
        self.assertEqual([c for c, _ in checks], [PASS, FAIL, PASS, WARN, PASS])
        self.assertIn("losses: gpu_launches_without_records=1, window_starts_late=1",
                      checks[1][1])
        self.assertIn("other loss counters not 0: cycle 0: gpu_launches_without_records=1",
                      checks[3][1])
        self.assertEqual(rows[0][6], "gpu_launches_without_records=1, window_starts_late=1")

    def test_nonzero_counters_and_missing_windows_fail(self):
        ws = [window(0, 0, 99, C(tiny=100), incomplete=2), window(1, 100, 199, C(tiny=100))]
        checks, _ = windows_check.judge_windows(ws, 3, self.TINY)
        self.assertEqual(checks[0], (FAIL, "2 window trace(s), expected 3"))
        self.assertEqual(checks[2][0], FAIL)
        self.assertIn("cycle 0: gpu_records_incomplete=2", checks[2][1])

    def test_a_counter_the_build_does_not_write_is_a_warning(self):
        w = window(0, 1, 2, C(a=2, b=2))
        w["counters"]["gpu_records_incomplete"] = None
        checks, _ = windows_check.judge_windows([w], 1, C(a=1, b=1))
        self.assertEqual([c for c, _ in checks], [PASS, PASS, PASS, WARN, PASS])
        self.assertIn("cupti_errors 0 in every window", checks[2][1])
        self.assertIn("`gpu_records_incomplete` is not in", checks[3][1])

    def test_symbol_name_reuse_shows_as_wrong_counts(self):
        # With a pointer-keyed name cache every launch after the first matches: one kernel per
        # step, so steps 1-2 hold {matmul: 1, bias: 1} where {matmul: 2, bias: 2} is expected.
        checks, _ = windows_check.judge_windows([window(0, 1, 2, C(a=1, b=1))], 1, C(a=1, b=1))
        self.assertEqual(checks[1][0], FAIL)

    def test_window_traces_and_their_counters_are_read_from_the_folder(self):
        for name, cycle, first, last in (("p.7.cycle1.steps100-199.trace.json", 1, 100, 199),
                                         ("p.7.cycle0.steps0-99.trace.json", 0, 0, 99)):
            self.write([api("cudaLaunchKernel", 1, 0), gpu("_Z11tiny_kernelPi", 1, 5)],
                       gprof={"cycle": cycle, "first_step": first, "last_step": last,
                              "partial": False,
                              "counters": {"cupti_errors": 0, "gpu_records_incomplete": 3}},
                       name=name)
        self.write([], name="trace.json")  # not a window
        ws = windows_check.read_windows(self.dir.name)
        self.assertEqual([(w["cycle"], w["first"], w["last"]) for w in ws],
                         [(0, 0, 99), (1, 100, 199)])
        self.assertEqual(ws[0]["kernels"], C(**{"tiny_kernel(int*)": 1}))
        self.assertEqual(ws[0]["counters"], {"gpu_records_incomplete": 3, "cupti_errors": 0})

    def test_counters_are_read_from_the_counters_object(self):
        t = Trace(self.write([], gprof={"gpu_status": "collected",
                                        "counters": {"cupti_errors": 4}}))
        self.assertEqual(t.counter("cupti_errors"), 4)
        self.assertIsNone(t.counter("gpu_records_incomplete"))

    def test_incomplete_records_are_a_loss(self):
        t = Trace(self.write([], gprof={"counters": {"gpu_records_incomplete": 1}}))
        self.assertEqual(t.loss_counters(), {"counters.gpu_records_incomplete": 1})


class TorchInsideTest(unittest.TestCase):
    CLOSE = ("gprof-run: recorded 1 process: 0 ranges, 30 API calls, 12 kernels, 1 copy, "
             "0 memsets; no losses; CUPTI /usr/local/cuda/lib64/libcupti.so.13; table /o/t.txt")
    DONE = "torch_inside: torch.profiler saw 9 CUDA events\nGPROF_EXAMPLE_DONE torch_inside\n"

    def test_a_line_naming_torch_profiler_and_cupti_passes(self):
        err = ("gprof-run: warning: torch.profiler (Kineto) took CUPTI's activity buffers at "
               "12.5 s: GPU records after that are missing\n" + self.CLOSE + "\n")
        checks = torch_inside_check.judge(0, self.DONE, err)
        self.assertEqual([c for c, _ in checks], [PASS, PASS])
        self.assertIn("torch.profiler (Kineto) took CUPTI", checks[1][1])

    def test_unknown_wording_is_a_warning_with_the_closing_line(self):
        checks = torch_inside_check.judge(0, self.DONE, "noise\n" + self.CLOSE + "\n")
        self.assertEqual([c for c, _ in checks], [PASS, WARN])
        self.assertIn("closing line: `gprof-run: recorded 1 process", checks[1][1])

    def test_a_line_naming_a_tool_without_cupti_does_not_count(self):
        err = "gprof-run: info: torch.profiler found\n" + self.CLOSE + "\n"
        self.assertEqual(torch_inside_check.judge(0, self.DONE, err)[1][0], WARN)

    def test_a_failed_program_or_no_closing_line_fails(self):
        self.assertEqual(torch_inside_check.judge(1, self.DONE, self.CLOSE)[0][0], FAIL)
        self.assertEqual(torch_inside_check.judge(0, "", self.CLOSE)[0][0], FAIL)
        checks = torch_inside_check.judge(0, self.DONE, "gprof-run: warn: something\n")
        self.assertEqual([c for c, _ in checks], [PASS, FAIL])

    def test_the_closing_line_is_the_last_recorded_line(self):
        err = "gprof-run: recorded 1 process: a\nother\ngprof-run: recorded 2 processes: b\n"
        self.assertEqual(torch_inside_check.closing_line(err), "gprof-run: recorded 2 processes: b")


class RunnerLimitsTest(unittest.TestCase):
    def test_a_run_past_the_deadline_is_not_started(self):
        with tempfile.TemporaryDirectory() as d:
            r = Runner(d, False, d, deadline=time.time()).run(["/bin/sh", "-c", "exit 0"])
            self.assertTrue(r.timed_out)
            self.assertIn("time budget is spent", r.stderr)

    def test_a_timeout_kills_the_whole_process_group(self):
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "survived")
            t = time.perf_counter()
            r = Runner(d, False, d).run(["/bin/sh", "-c", f"(sleep 3; touch {marker}) & wait"],
                                        timeout_s=1)
            self.assertTrue(r.timed_out)
            self.assertLess(time.perf_counter() - t, 2.5)
            time.sleep(2.6)
            self.assertFalse(os.path.exists(marker))


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
        r.device = "NVIDIA H200"
        self.assertTrue(r.render().rstrip().splitlines()[-1].startswith(
            "**Overall: FAIL** — device: NVIDIA H200; 1 passed, 1 failed"))


# A stand-in for "python with torch" so that the step-6 flow (runs, result files, trace parsing,
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
    def test_step_six_flow_compares_steps_from_all_traces(self):
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
            self.assertIn("PASS the two torch.profiler runs agree with each other in all 10 steps",
                          text)
            self.assertIn("PASS kernel names and counts match the reference in 10/10 steps "
                          "(2 kernels per step in gprof-run)", text)
            self.assertIn("PASS gprof-run lost no records", text)
            self.assertIn("| gprof-run |", "\n".join(s.lines))


@unittest.skipUnless(BUILD and os.path.exists(os.path.join(BUILD, "tests", "cudasim", "lib")),
                     "set GPU_CHECK_BUILD_DIR to a build with the stand-in")
class NewChecksOnStandIn(unittest.TestCase):
    """Steps 3-5 end to end on the stand-in (real gprof-run, real window traces)."""

    def statuses(self, fn):
        s = Report("t").section("s")
        fn(s)
        return s, "\n".join(f"{st} {msg}" for st, msg in s.checks)

    def test_busy_gpu_windows_exit_with_kernels_queued_and_graphs_pass(self):
        with tempfile.TemporaryDirectory() as d:
            runner = Runner(BUILD, True, d)
            _, text = self.statuses(lambda s: windows_check.run_busy(runner, s))
            self.assertIn("PASS busy GPU: kernels per window as launched in its steps "
                          "(50, 50, 50)", text)
            self.assertIn("PASS busy GPU: gpu_records_incomplete and cupti_errors 0", text)
            _, text = self.statuses(lambda s: (gpu_work_check.run_exit_queued(runner, s),
                                               gpu_work_check.run_graphs(runner, s),
                                               gpu_work_check.run_module_unload(runner, s)))
            self.assertIn("PASS exit with kernels queued: all 200 queued kernels recorded", text)
            # graph_capture 5: 5 replays of a 3-kernel graph (examples/cuda/graph_capture.cu).
            self.assertIn("PASS graph_capture: 15 kernels, expected 15 (5 replays x 3)", text)
            self.assertIn("PASS graph_capture: kernels per cudaGraphLaunch: [3, 3, 3, 3, 3]", text)
            self.assertIn("PASS graph_capture: graphNodeId on 15 of 15 kernels", text)
            self.assertIn("PASS graph_capture: captured launches not counted", text)
            self.assertIn("SKIP cuModuleUnload", text)
            self.assertNotIn("FAIL", text)

    def test_windows_without_synchronization_and_the_symbol_name_probe_pass(self):
        with tempfile.TemporaryDirectory() as d:
            runner = Runner(BUILD, True, d)
            s, text = self.statuses(lambda s: windows_check.run_nosync(runner, s))
            self.assertIn("PASS nosync: 3 window trace(s), expected 3", text)
            if "FAIL nosync: kernels per window" in text:
                self.assertIn("losses:", text)  # as below: a late window start, named
            else:
                self.assertIn("PASS nosync: kernels per window as launched in its steps "
                              "(100, 100, 100)", text)  # each launch ends its step
            s, text = self.statuses(lambda s: windows_check.run_symbol_probe(runner, s))
            self.assertNotIn("crashed", text)
            self.assertIn("PASS symbolName probe: 3 window trace(s), expected 3", text)
            # The stand-in's product now and then starts a window late and loses its first
            # kernel (window_starts_late, gpu_launches_without_records): the check must then
            # fail and name the losses.
            if "FAIL symbolName probe: kernels per window" in text:
                self.assertIn("losses:", text)
            else:
                self.assertIn("(4, 4, 4)", text)

    def test_a_gpu_clock_100_us_early_fails_the_skew_check(self):
        with tempfile.TemporaryDirectory() as d:
            runner = Runner(BUILD, True, d)
            r = runner.profile("skewed", [runner.bin("launch_loop"), "50"],
                               extra_env={"CUDASIM_GPU_SKEW_NS": "-100000"})
            self.assertTrue(r.ok(), r.tail())
            s, text = self.statuses(lambda s: clock_skew.run(s, [("skewed", r.trace)]))
            self.assertEqual(s.checks[0][0], FAIL, text)
            self.assertIn("more than 50 us", text)


class TorchMissing(unittest.TestCase):
    def test_missing_torch_is_a_skip_on_the_standin_and_a_failure_on_a_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            for standin, want in ((True, SKIP), (False, FAIL)):
                s = Report("t").section("3")
                torch_compare.run(Runner(d, standin, d), s, "/nonexistent/python")
                self.assertEqual(s.checks[0][0], want)
                if standin:
                    self.assertIn("skipped: torch not importable", s.checks[0][1])


# A window table as gprof-run writes it (outputs/table/table.cpp's layout: name column min(longest +
# 4, 55) wide, names cut to it with "...", 12-character columns, two spaces after each cell, so
# every line ends in two spaces; "CUDA time avg" is 13 characters and pushes the rest of the
# header line one to the right). The seeds' matmul+add at 64, 5 calls, hand-made figures whose
# sums hold: aten::mm 55 us own + 15 us occupancy query + 20 us of the 10 launches = 90 us, ...
TABLE_64 = textwrap.dedent("""\
    -------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
                                                       Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  
    -------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
                                                   aten::mm        22.92%      55.000us        37.50%      90.000us      18.000us      14.560us        67.41%      14.560us       2.912us             5  
                          nvjet_tst_64x8_64x16_4x1_v_bz_TNT         0.00%       0.000us         0.00%       0.000us       0.000us      14.560us        67.41%      14.560us       2.912us             5  
                                                  aten::add        14.58%      35.000us        22.92%      55.000us      11.000us       7.040us        32.59%       7.040us       1.408us             5  
    void at::native::vectorized_elementwise_kernel<4, at...         0.00%       0.000us         0.00%       0.000us       0.000us       7.040us        32.59%       7.040us       1.408us             5  
                                               aten::matmul        12.50%      30.000us        50.00%     120.000us      24.000us       0.000us         0.00%      14.560us       2.912us             5  
                                      cudaDeviceSynchronize        10.42%      25.000us        10.42%      25.000us      25.000us       0.000us         0.00%       0.000us       0.000us             1  
                                           cudaLaunchKernel        16.67%      40.000us        16.67%      40.000us       4.000us       0.000us         0.00%      21.600us       2.160us            10  
              cudaOccupancyMaxActiveBlocksPerMultiprocessor         6.25%      15.000us         6.25%      15.000us       3.000us       0.000us         0.00%       0.000us       0.000us             5  
                                                 matmul_add        16.67%      40.000us        89.58%     215.000us      43.000us       0.000us         0.00%      21.600us       4.320us             5  
    -------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
    Self CPU time total: 240.000us
    Self CUDA time total: 21.600us
    Profile window: cycle 0, steps 2..6
    """)


def ops_table(mm=14.56, add=7.04, matmul_self=0.0, counts=None, cpu_total=240.0, extra=(),
              drop=(), cuda_total=None):
    """A hand-made torch_ops_check.Table: the four ops, their two kernels and a launch row."""
    c = {"matmul_add": 5, "aten::matmul": 5, "aten::mm": 5, "aten::add": 5}
    c.update(counts or {})

    def row(name, calls, self_cpu, cpu_total, self_cuda, cuda_total):
        return {"name": name, "calls": calls, "self_cpu": self_cpu, "cpu_total": cpu_total,
                "self_cuda": self_cuda, "cuda_total": cuda_total, "cells": {},
                "round": {"self_cpu": 0.0005, "cpu_total": 0.0005, "self_cuda": 0.0005,
                          "cuda_total": 0.0005}}
    rows = [row("aten::mm", c["aten::mm"], 55.0, 90.0, mm, mm),
            row("gemm_kernel", 5, 0.0, 0.0, mm, mm),
            row("aten::add", c["aten::add"], 35.0, 55.0, add, add),
            row("add_kernel", 5, 0.0, 0.0, add, add),
            row("aten::matmul", c["aten::matmul"], 30.0, 120.0, matmul_self, mm + matmul_self),
            row("cudaLaunchKernel", 10, 40.0, 40.0, 0.0, mm + add),
            row("matmul_add", c["matmul_add"], 40.0, 215.0, 0.0, mm + add + matmul_self)]
    rows = [r for r in rows if r["name"] not in drop] + [row(*e) for e in extra]
    total = mm + add if cuda_total is None else cuda_total
    return torch_ops_check.Table(rows, cpu_total, total, ["Profile window: cycle 0, steps 2..6"],
                                 {"cpu": 0.0005, "cuda": 0.0005})


def ops_reference(mm=14.0, add=7.0, calls=5, cpu_total=400.0):
    """torch_matmul_add.py --mode torch's JSON for the same calls (torch's own figures)."""
    def row(name, self_cuda, cuda_total, count=calls, device="CPU", annotation=False):
        return {"name": name, "device_type": device, "is_user_annotation": annotation,
                "count": count, "self_cpu_time_total": 10.0, "cpu_time_total": 20.0,
                "self_device_time_total": self_cuda, "device_time_total": cuda_total}
    return {"rows": [row("matmul_add", 0.0, mm + add, annotation=True),
                     row("matmul_add", mm + add + 3.0, mm + add + 3.0, device="CUDA",
                         annotation=True),
                     row("aten::matmul", 0.0, mm), row("aten::mm", mm, mm),
                     row("aten::add", add, add), row("gemm_kernel", mm, mm, device="CUDA")],
            "self_cpu_total": cpu_total, "self_device_total": mm + add}


class TorchOpsTableTest(unittest.TestCase):
    def test_the_hand_written_window_table_parses(self):
        t = torch_ops_check.parse_table(TABLE_64)
        self.assertEqual([r["name"] for r in t.rows][:4], [
            "aten::mm", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "aten::add",
            "void at::native::vectorized_elementwise_kernel<4, at..."])
        mm = t.host("aten::mm")
        self.assertEqual((mm["calls"], mm["self_cpu"], mm["cpu_total"], mm["self_cuda"],
                          mm["cuda_total"]), (5, 55.0, 90.0, 14.56, 14.56))
        self.assertEqual(t.host("cudaLaunchKernel")["calls"], 10)
        self.assertEqual(t.host("matmul_add")["cuda_total"], 21.6)
        # A kernel row is a device row, not an op: host() does not find it.
        self.assertIsNone(t.host("nvjet_tst_64x8_64x16_4x1_v_bz_TNT"))
        self.assertEqual(len(t.device_rows()), 2)
        self.assertEqual((t.self_cpu_total, t.self_cuda_total), (240.0, 21.6))
        self.assertEqual(t.notes, ["Profile window: cycle 0, steps 2..6"])
        self.assertFalse(t.partial())
        self.assertEqual(t.loss_notes(), [])
        # The header cell that overflows its column does not shift the cells after it.
        self.assertEqual(t.rows[0]["cells"]["CUDA time avg"], "2.912us")
        self.assertEqual(t.rows[0]["cells"]["# of Calls"], "5")

    def test_a_golden_table_of_the_exporter_parses(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                            "golden", "overhead_bound", "table.txt")
        t = torch_ops_check.read_table(path)
        self.assertEqual([(r["name"], r["calls"]) for r in t.rows],
                         [("add_scalar(float*, float)", 200), ("train_step", 1),
                          ("Context Sync", 1), ("cudaDeviceSynchronize", 1),
                          ("cudaLaunchKernel", 200)])
        self.assertEqual(t.host("train_step")["cpu_total"], 6500.0)
        self.assertEqual([r["name"] for r in t.device_rows()], ["add_scalar(float*, float)"])
        self.assertEqual((t.self_cpu_total, t.self_cuda_total), (6500.0, 400.0))

    def test_durations_and_their_print_rounding(self):
        self.assertEqual(torch_ops_check.duration_us("12.345us"), (12.345, 0.0005))
        self.assertEqual(torch_ops_check.duration_us("4.495ms"), (4495.0, 0.5))
        self.assertEqual(torch_ops_check.duration_us("1.500s"), (1500000.0, 500.0))
        with self.assertRaises(ValueError):
            torch_ops_check.duration_us("NaN")

    def test_partial_windows_and_loss_notes_are_seen(self):
        text = TABLE_64.replace("steps 2..6", "steps 2..6 (partial: the program exited before "
                                "the active window ended)") + "3 GPU records incomplete\n"
        t = torch_ops_check.parse_table(text)
        self.assertTrue(t.partial())
        self.assertEqual(t.loss_notes(), ["3 GPU records incomplete"])
        checks, _ = torch_ops_check.judge(64, t, None, 5)
        self.assertIn((WARN, "size 64: the table's notes: 3 GPU records incomplete"), checks)

    def test_text_that_is_not_a_table_is_refused(self):
        with self.assertRaises(ValueError):
            torch_ops_check.parse_table("gprof-run: no profile\n")

    def test_window_tables_are_found_by_name(self):
        with tempfile.TemporaryDirectory() as d:
            for n in ("table.txt", "python.7.cycle0.steps2-6.table.txt",
                      "python.7.cycle0.steps2-6.trace.json"):
                open(os.path.join(d, n), "w").close()
            self.assertEqual([os.path.basename(p) for p in torch_ops_check.window_tables(d)],
                             ["python.7.cycle0.steps2-6.table.txt"])
        self.assertEqual(torch_ops_check.gprof_options(5, 2),
                         ["--step", "nvtx:matmul_add*", "--wait", "2", "--warmup", "0",
                          "--active", "5", "--repeat", "1"])


# Step 9b's window table at 4096 as gprof-run prints it with --profile-memory, numbers worked out
# by hand for 5 calls of add(matmul(x, w), b) in bf16 (32 MiB per result): aten::mm and aten::add
# each allocate their result, matmul_add frees the matmul's when add returns (-32 MiB Self per
# call, +32 MiB in all), aten::matmul holds aten::mm's.
MEMORY_TABLE = textwrap.dedent("""\
    --------------  ------------  -------------  ------------
              Name      CUDA Mem  Self CUDA Mem    # of Calls
    --------------  ------------  -------------  ------------
        matmul_add     160.00 MB     -160.00 MB             5
      aten::matmul     160.00 MB            0 B             5
          aten::mm     160.00 MB      160.00 MB             5
         aten::add     160.00 MB      160.00 MB             5
    --------------  ------------  -------------  ------------
    Self CPU time total: 1.000ms
    """)


def memory_reference(mm_self=160 << 20):
    mib = 1 << 20
    rows = [("matmul_add", 160 * mib, -160 * mib), ("aten::matmul", 160 * mib, 0),
            ("aten::mm", 160 * mib, mm_self), ("aten::add", 160 * mib, 160 * mib)]
    return {"rows": [{"name": n, "device_type": "CPU", "device_memory_usage": total,
                      "self_device_memory_usage": own} for n, total, own in rows]}


class TorchMemoryVerdictTest(unittest.TestCase):
    def test_memory_cells_in_torchs_units(self):
        self.assertEqual(torch_memory_check.memory_bytes("32.00 MB"),
                         (32 << 20, 0.005 * (1 << 20)))
        self.assertEqual(torch_memory_check.memory_bytes("-512 B"), (-512, 0))
        self.assertEqual(torch_memory_check.memory_bytes("1.50 Kb")[0], 1536)
        with self.assertRaises(ValueError):
            torch_memory_check.memory_bytes("32 MiB")

    def test_equal_figures_pass_and_a_different_one_fails_naming_it(self):
        table = torch_ops_check.parse_table(MEMORY_TABLE)
        checks, figures = torch_memory_check.judge(table, memory_reference(), 5)
        self.assertEqual(checks, [])
        self.assertEqual(len(figures), 8)
        checks, _ = torch_memory_check.judge(table, memory_reference(mm_self=96 << 20), 5)
        self.assertEqual(checks, [(FAIL, "aten::mm: Self CUDA Mem 160.00 MB, torch.profiler "
                                         "100663296 B")])


class TorchOpsVerdictTest(unittest.TestCase):
    def statuses(self, checks):
        return [st for st, _ in checks]

    def text(self, checks, status):
        return "\n".join(t for st, t in checks if st == status)

    def test_the_seeds_figures_at_64_pass(self):
        checks, figures = torch_ops_check.judge(64, ops_table(), ops_reference(), 5)
        self.assertEqual(set(self.statuses(checks)), {PASS}, checks)
        text = self.text(checks, PASS)
        self.assertIn("call counts equal torch.profiler's (matmul_add 5, aten::matmul 5, "
                      "aten::mm 5, aten::add 5)", text)
        self.assertIn("aten::mm 14.560 us + aten::add 7.040 us = 21.600 us vs 21.600 us", text)
        self.assertIn("GPU times within 25% or 5 us of torch.profiler's", text)
        self.assertIn("overhead-bound: Self CUDA time total < 10% of Self CPU time total: "
                      "gprof-run 9.0% (21.600 us / 240.000 us), torch.profiler 5.2%", text)
        # Side by side: ours, torch's, judged.
        self.assertIn([64, "aten::mm", "Self CUDA", "14.560 us", "14.000 us", "yes"], figures)
        self.assertIn([64, "matmul_add", "# of Calls", 5, 5, "-"], figures)

    def test_the_gpu_side_annotation_row_of_torch_is_not_an_op(self):
        ref = torch_ops_check.reference_op(ops_reference(), "matmul_add")
        self.assertEqual((ref["calls"], ref["self_cuda"], ref["cuda_total"]), (5, 0.0, 21.0))

    def test_a_missing_row_fails(self):
        checks, _ = torch_ops_check.judge(64, ops_table(drop=("aten::add",), cuda_total=14.56),
                                          ops_reference(), 5)
        self.assertEqual(checks[0][0], FAIL)
        self.assertIn("missing: aten::add", checks[0][1])

    def test_wrong_counts_fail(self):
        checks, _ = torch_ops_check.judge(64, ops_table(counts={"aten::mm": 7}), ops_reference(),
                                          5)
        self.assertIn("call counts equal torch.profiler's — wrong: aten::mm 7 (torch.profiler 5)",
                      self.text(checks, FAIL))
        # Without torch's rows the counts are judged against the compared calls.
        checks, _ = torch_ops_check.judge(64, ops_table(counts={"aten::add": 4}), None, 5)
        self.assertIn("wrong: aten::add 4 (calls 5)", self.text(checks, FAIL))
        self.assertIn("no torch.profiler rows to compare with", self.text(checks, WARN))

    def test_gpu_time_owned_by_no_op_or_none_for_mm_fails(self):
        # A 3 us kernel row that no op owns: the ops' Self CUDA fall short of the total.
        t = ops_table(extra=[("orphan_kernel", 1, 0.0, 0.0, 3.0, 3.0)], cuda_total=24.6)
        checks, _ = torch_ops_check.judge(64, t, ops_reference(), 5)
        self.assertIn("= 21.600 us vs 24.600 us", self.text(checks, FAIL))
        # aten::mm's kernel time went to aten::matmul instead.
        checks, _ = torch_ops_check.judge(64, ops_table(mm=0.0, matmul_self=14.56),
                                          ops_reference(), 5)
        failed = self.text(checks, FAIL)
        self.assertIn("aten::mm's Self CUDA 0.000 us > 0", failed)
        self.assertIn("aten::matmul's Self CUDA 14.560 us is 0", failed)

    def test_timing_differences_are_warnings_not_failures(self):
        # aten::mm 30 us against torch's 14: outside 25% and 5 us; the rest within.
        checks, figures = torch_ops_check.judge(64, ops_table(mm=30.0), ops_reference(), 5)
        self.assertNotIn(FAIL, self.statuses(checks))
        warned = self.text(checks, WARN)
        self.assertIn("outside: matmul_add CUDA total 37.040 us vs 21.000 us; aten::matmul CUDA "
                      "total 30.000 us vs 14.000 us; aten::mm Self CUDA 30.000 us vs 14.000 us; "
                      "Self CUDA time total 37.040 us vs 21.000 us", warned)
        self.assertIn([64, "aten::mm", "Self CUDA", "30.000 us", "14.000 us", "no"], figures)
        # 3 us against 7 us: off by more than 25% but within the 5 us slack.
        checks, _ = torch_ops_check.judge(64, ops_table(add=3.0), ops_reference(), 5)
        self.assertNotIn("aten::add Self CUDA", self.text(checks, WARN))

    def test_overhead_and_compute_bound_verdicts(self):
        # 64 not overhead-bound: 21.6 us of GPU time against 100 us of CPU time (21.6%).
        checks, _ = torch_ops_check.judge(64, ops_table(cpu_total=100.0), ops_reference(), 5)
        self.assertIn("size 64: the article's verdict, overhead-bound: Self CUDA time total < 10% "
                      "of Self CPU time total: gprof-run 21.6%", self.text(checks, WARN))
        self.assertNotIn(FAIL, self.statuses(checks))
        # 4096: 4.495 ms of GPU time against 4.908 ms of CPU time (the seed's figures): 91.6%.
        big = ops_table(mm=4300.0, add=195.0, cpu_total=4908.0)
        ref = ops_reference(mm=4250.0, add=190.0, cpu_total=5100.0)
        checks, _ = torch_ops_check.judge(4096, big, ref, 5)
        self.assertEqual(set(self.statuses(checks)), {PASS}, checks)
        self.assertIn("compute-bound: Self CUDA time total > 50% of Self CPU time total: "
                      "gprof-run 91.6% (4495.000 us / 4908.000 us), torch.profiler 87.1%",
                      self.text(checks, PASS))
        checks, _ = torch_ops_check.judge(4096, ops_table(mm=4300.0, add=195.0,
                                                          cpu_total=20000.0), ref, 5)
        self.assertIn("gprof-run 22.5%", self.text(checks, WARN))

    def test_no_window_table_fails(self):
        checks, _ = torch_ops_check.judge(64, None, ops_reference(), 5)
        self.assertEqual(checks, [(FAIL, "size 64: gprof-run wrote no window table")])

    def test_the_reference_json_line_is_found_in_the_output(self):
        out = 'noise {\n{"rows": [], "self_cpu_total": 1.0}\nGPROF_EXAMPLE_DONE x\n'
        self.assertEqual(torch_ops_check.reference_rows(out), {"rows": [], "self_cpu_total": 1.0})
        self.assertIsNone(torch_ops_check.reference_rows("GPROF_EXAMPLE_DONE x\n"))

    def test_missing_torch_is_a_skip_on_the_standin_and_a_failure_on_a_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            for standin, want in ((True, SKIP), (False, FAIL)):
                s = Report("t").section("9")
                torch_ops_check.run(Runner(d, standin, d), s, "/nonexistent/python")
                self.assertEqual([st for st, _ in s.checks], [want])
                if standin:
                    self.assertIn("skipped: torch not importable", s.checks[0][1])


# Step 9's flow without a GPU: a fake gprof-run that runs the program and writes TABLE_64 as the
# window table the schedule asks for, and a fake Python whose torch mode prints torch's rows
# (both read what they write from files beside them: no environment variables are set).
FAKE_GPROF_RUN = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, subprocess, sys
    a = sys.argv[1:]
    out = a[a.index("-o") + 1]
    wait, active = int(a[a.index("--wait") + 1]), int(a[a.index("--active") + 1])
    os.makedirs(out)
    rc = subprocess.call(a[a.index("--") + 1:])
    name = "python.7.cycle0.steps%d-%d" % (wait, wait + active - 1)
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    table = open(os.path.join(here, "..", "window-table.txt")).read()
    open(os.path.join(out, name + ".table.txt"), "w").write(table)
    json.dump({"traceEvents": []}, open(os.path.join(out, name + ".trace.json"), "w"))
    sys.exit(rc)
    """)
FAKE_TORCH_PYTHON = textwrap.dedent("""\
    #!/usr/bin/env python3
    import os, sys
    if sys.argv[1] == "-c":
        print("2.11.0+fake 13.0"); sys.exit(0)
    if "torch" in sys.argv:
        here = os.path.dirname(os.path.abspath(sys.argv[0]))
        print(open(os.path.join(here, "reference.json")).read().strip())
    print("GPROF_EXAMPLE_DONE torch_matmul_add_" + sys.argv[sys.argv.index("--mode") + 1])
    """)


class TorchOpsFlow(unittest.TestCase):
    def test_step_nine_runs_both_tools_per_size_and_judges_the_window_table(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "bin"))
            for path, text in ((os.path.join(d, "bin", "gprof-run"), FAKE_GPROF_RUN),
                               (os.path.join(d, "python"), FAKE_TORCH_PYTHON),
                               (os.path.join(d, "window-table.txt"), TABLE_64),
                               (os.path.join(d, "reference.json"), json.dumps(ops_reference()))):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                os.chmod(path, stat.S_IRWXU)
            runner = Runner(d, False, d)
            s = Report("t").section("9")
            try:
                torch_ops_check.run(runner, s, os.path.join(d, "python"), sizes=(64,))
            finally:
                torch_compare._torch_status_cache.clear()  # asked once per Python: not this one
            text = "\n".join(f"{st} {msg}" for st, msg in s.checks)
            self.assertNotIn("FAIL", text)
            self.assertIn("PASS size 64: under gprof-run the program exited 0", text)
            self.assertIn("PASS size 64: under torch.profiler the program exited 0", text)
            self.assertIn("PASS size 64: call counts equal torch.profiler's", text)
            self.assertIn("PASS size 64: the ops' Self CUDA add up to Self CUDA time total", text)
            lines = "\n".join(s.lines)
            self.assertIn("python.7.cycle0.steps2-6.table.txt", lines)
            self.assertIn("| 64 | aten::mm | Self CUDA | 14.560 us | 14.000 us | yes |", lines)


TORCH_PYTHON = os.environ.get("GPU_CHECK_TORCH_PYTHON", "")


@unittest.skipUnless(TORCH_PYTHON and os.path.exists(TORCH_PYTHON),
                     "set GPU_CHECK_TORCH_PYTHON to a Python with torch (a CPU torch will do)")
class TorchMatmulAddOnCpu(unittest.TestCase):
    def test_torch_mode_prints_the_four_rows_with_their_counts(self):
        import subprocess
        p = subprocess.run([TORCH_PYTHON, torch_ops_check.SCRIPT, "--size", "8", "--mode",
                            "torch", "--device", "cpu", "--iters", "3"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        ref = torch_ops_check.reference_rows(p.stdout)
        self.assertIsNotNone(ref, p.stdout)
        for name in torch_ops_check.OPS:
            self.assertEqual(torch_ops_check.reference_op(ref, name)["calls"], 3, name)
        self.assertGreater(ref["self_cpu_total"], 0)
        self.assertIn("GPROF_EXAMPLE_DONE torch_matmul_add_torch", p.stdout)


class CuptiLifeVerdictTest(unittest.TestCase):
    """cupti_life_check's verdicts on hand-made figures."""

    def statuses(self, checks):
        return [st for st, _ in checks]

    def test_libcupti_named_with_its_version_passes_and_a_gpu_run_without_one_fails(self):
        with tempfile.TemporaryDirectory() as d:
            real = os.path.join(d, "libcupti.so.13.0.85")
            open(real, "w").close()
            link = os.path.join(d, "libcupti.so.13")
            os.symlink(real, link)
            self.assertEqual(cupti_life_check.cupti_version(link), "13.0.85")
            checks = cupti_life_check.judge_libcupti([("a", link, "13.0.85", 10)])
            self.assertEqual(self.statuses(checks), [PASS])
            self.assertIn("13.0.85", checks[0][1])
        self.assertEqual(self.statuses(cupti_life_check.judge_libcupti([("b", "", "", 3)])), [FAIL])
        self.assertEqual(self.statuses(cupti_life_check.judge_libcupti([("c", "", "", 0)])), [WARN])
        two = cupti_life_check.judge_libcupti([("a", "/x/libcupti.so.13", "", 1),
                                               ("b", "/y/libcupti.so.13", "", 1)])
        self.assertEqual(self.statuses(two), [PASS, PASS, WARN])

    def test_kernels_after_the_programs_profiler_present_and_on_the_host_clock(self):
        base, end, stop = 1_700_000_000_000_000_000, 1_700_000_010_000_000_000, \
            1_700_000_005_000_000_000
        good = [base + 1000, stop + 10, stop + 20, stop + 30, stop + 40, stop + 50]
        self.assertEqual(self.statuses(cupti_life_check.judge_after_own_profiler(
            base, end, stop, 5, good)), [PASS, PASS])
        # Four after the block where the program launched five: lost kernels.
        self.assertEqual(self.statuses(cupti_life_check.judge_after_own_profiler(
            base, end, stop, 5, good[:-1])), [PASS, FAIL])
        # A TSC tick count read as ns (a 1970 date): off the host clock.
        tsc = good + [3_000_000_000_000]
        self.assertEqual(self.statuses(cupti_life_check.judge_after_own_profiler(
            base, end, stop, 5, tsc)), [FAIL, PASS])

    def test_sigterm_needs_an_exit_and_a_dump_within_five_seconds(self):
        self.assertEqual(self.statuses(cupti_life_check.judge_sigterm(1.2, True, 1)), [PASS])
        self.assertEqual(self.statuses(cupti_life_check.judge_sigterm(5.5, True, 1)), [FAIL])
        self.assertEqual(self.statuses(cupti_life_check.judge_sigterm(1.0, True, 0)), [FAIL])
        self.assertEqual(self.statuses(cupti_life_check.judge_sigterm(20.0, False, 0)), [FAIL])

    def test_fork_child_is_inert_and_the_parent_keeps_its_kernels(self):
        self.assertEqual(self.statuses(cupti_life_check.judge_fork(0, True, 4, 1)), [PASS])
        self.assertEqual(self.statuses(cupti_life_check.judge_fork(0, True, 4, 3)), [FAIL])
        self.assertEqual(self.statuses(cupti_life_check.judge_fork(0, True, 0, 1)), [FAIL])
        self.assertEqual(self.statuses(cupti_life_check.judge_fork(-11, False, 4, 1)), [FAIL])


class EagerOverheadTest(unittest.TestCase):
    def test_at_most_torch_profilers_cost_passes_and_more_warns_then_fails(self):
        self.assertEqual(launch_overhead.judge_eager_overhead(5.0, 7.0, 6.0)[0], PASS)
        self.assertEqual(launch_overhead.judge_eager_overhead(5.0, 7.0, 7.0)[0], PASS)
        self.assertEqual(launch_overhead.judge_eager_overhead(5.0, 7.0, 8.0)[0], WARN)
        st, text = launch_overhead.judge_eager_overhead(5.0, 7.0, 9.0)
        self.assertEqual(st, FAIL)
        self.assertIn("gprof-run adds 4.00 us per op, torch.profiler 2.00 us", text)
        self.assertIn("2.00x torch.profiler", text)

    def test_an_unmeasurable_torch_profiler_cost_warns(self):
        self.assertEqual(launch_overhead.judge_eager_overhead(5.0, 5.01, 9.0)[0], WARN)


class GpuWorkTest(unittest.TestCase):
    """The verdicts of step 2b and of the deviceProperties check, on hand-made figures."""

    def test_exit_with_everything_recorded_passes(self):
        checks = gpu_work_check.judge_exit_queued(
            200, 200, {"cupti_errors": 0, "gpu_records_incomplete": 0})
        self.assertEqual([c for c, _ in checks], [PASS, PASS])

    def test_exit_with_incomplete_records_warns_and_unaccounted_ones_fail(self):
        warn = gpu_work_check.judge_exit_queued(
            200, 150, {"cupti_errors": 0, "gpu_records_incomplete": 50})
        self.assertEqual(warn[1][0], WARN)
        self.assertIn("50 of 200 kernels came back incomplete", warn[1][1])
        lost = gpu_work_check.judge_exit_queued(
            200, 150, {"cupti_errors": 0, "gpu_records_incomplete": 10})
        self.assertEqual(lost[1][0], FAIL)
        self.assertIn("40 of 200 queued kernels neither recorded nor counted", lost[1][1])

    def test_exit_with_cupti_errors_fails(self):
        checks = gpu_work_check.judge_exit_queued(
            200, 200, {"cupti_errors": 3, "gpu_records_incomplete": 0})
        self.assertEqual(checks[0], (FAIL, "cupti_errors=3 at the exit flush"))

    def test_five_replays_of_three_kernels_pass(self):
        checks = gpu_work_check.judge_graph(5, 3, {10, 11, 12, 13, 14},
                                            {c: 3 for c in range(10, 15)}, [7] * 15, 0)
        self.assertEqual([c for c, _ in checks], [PASS] * 5)

    def test_graph_kernels_on_other_calls_or_missing_nodes_or_counted_captures_fail(self):
        by_corr = {c: 3 for c in range(10, 14)}
        by_corr[3] = 3  # the captured launches' own ids: they should have made no record
        checks = gpu_work_check.judge_graph(5, 3, {10, 11, 12, 13, 14}, by_corr, [7] * 14 + [0],
                                            3)
        self.assertEqual([c for c, _ in checks], [PASS, FAIL, FAIL, FAIL, FAIL])
        self.assertIn("kernels per cudaGraphLaunch: [3, 3, 3, 3, 0]", checks[2][1])
        self.assertIn("graphNodeId on 14 of 15 kernels", checks[3][1])

    def test_graph_without_sqlite_export_warns(self):
        checks = gpu_work_check.judge_graph(1, 3, {1}, {1: 3}, None, 0)
        self.assertEqual(checks[3][0], WARN)

    def test_module_unload_names_must_be_exact(self):
        good = collections.Counter({"unload_kernel": 10, "after_unload_kernel(float*)": 3})
        self.assertEqual(gpu_work_check.judge_module_unload(good, 10)[0][0], PASS)
        bad = collections.Counter({"unload_kernel": 7, "\x90\x13garbage": 3,
                                   "after_unload_kernel(float*)": 3})
        st, text = gpu_work_check.judge_module_unload(bad, 10)[0]
        self.assertEqual(st, FAIL)
        self.assertIn("unload_kernel x7 (expected 10)", text)
        self.assertIn("other names:", text)

    def test_a_trace_without_device_properties_fails(self):
        self.assertEqual(examples_check.judge_devices({}), (FAIL, "no deviceProperties in the trace"))
        self.assertEqual(examples_check.judge_devices({"deviceProperties": []})[0], FAIL)
        self.assertEqual(examples_check.judge_devices({"deviceProperties": [{"name": "H200"}]}),
                         (PASS, "deviceProperties: H200"))



class NoRecordCopiesTest(unittest.TestCase):
    """Step 2c: per kind of copy that moves nothing, whether CUPTI wrote records."""

    def calls(self, with_record):
        # One step: 0-byte cudaMemcpy (corr 1), cudaMemsetAsync (2), host-to-host cudaMemcpy (3).
        host = [api("cudaMemcpy", 1, 10), api("cudaMemsetAsync", 2, 20), api("cudaMemcpy", 3, 30)]
        gpu = {c: [{"cat": "gpu_memcpy"}] for c in with_record}
        return no_record_copies_check.records_by_call(host, gpu)

    def test_each_kind_is_told_apart_by_call_order(self):
        by_kind = self.calls({3})
        self.assertEqual(by_kind["0-byte cudaMemcpy"], (1, 0))
        self.assertEqual(by_kind["host-to-host cudaMemcpy"], (1, 1))
        self.assertEqual(by_kind["0-byte cudaMemsetAsync"], (1, 0))

    def test_all_or_none_is_a_finding_some_is_a_warning_a_missing_kernel_fails(self):
        checks = no_record_copies_check.judge_records(
            {"a": (3, 3), "b": (3, 0), "c": (3, 1)}, kernels=9, expected_kernels=9)
        self.assertEqual([st for st, _ in checks], [PASS, PASS, PASS, WARN])
        self.assertIn("a record for each", checks[1][1])
        self.assertIn("no record", checks[2][1])
        self.assertEqual(no_record_copies_check.judge_records({}, 8, 9)[0][0], FAIL)

    def test_a_window_that_waited_or_lost_a_kernel_fails(self):
        self.assertEqual(no_record_copies_check.judge_windows([3, 3, 3, 0], "")[0][0], PASS)
        self.assertEqual(no_record_copies_check.judge_windows([3, 2, 3], "")[0][0], FAIL)
        self.assertEqual(no_record_copies_check.judge_windows(
            [3, 3, 3], "7 GPU calls of x never got a GPU record")[0][0], FAIL)


if __name__ == "__main__":
    unittest.main()
