"""HTA and TensorBoard's profiler plugin read gprof-run's trace of a CUDA program (verified on the
CUDA/CUPTI stand-in): `gprof-run patterns pageable` (tests/findings/patterns.cu), 10 steps
(NVTX ranges ProfilerStep#0..9), each an async HtoD copy of 8 MiB from pageable memory and one
spin_kernel<<<1, 32>>> on the same stream, then a stream sync. The stand-in's knobs fix the GPU
times: each kernel 300 us (CUDASIM_KERNEL_NS), each copy 8,388,608 B / 12 GB/s = 699.051 us
(CUDASIM_BW_PAGEABLE_GBPS default); its device has 132 SMs of 2,048 threads (deviceProperties).

Environment: GPROF_RUN, PATTERNS (the patterns program), STANDIN_LIB_DIR (the stand-in's
libcudart/libcupti).
"""
import os
import shutil
import subprocess
import tempfile
import unittest

from consumers import (GPROF_RUN, hta_analysis, load_json, needs_consumers, quiet,
                       tensorboard_profile, tensorboard_steps)

PATTERNS = os.environ.get("PATTERNS", "")
STANDIN_LIB_DIR = os.environ.get("STANDIN_LIB_DIR", "")

STEPS = 10
KERNEL_US = 300.0
COPY_BYTES = 8 << 20
COPY_US = COPY_BYTES / 12e3  # 699.05 us at the stand-in's pageable 12 GB/s
KERNEL = "(anonymous namespace)::spin_kernel(long long)"
# HTA rounds every event inward to whole microseconds (ceil of its start, floor of its end:
# trace_parser.round_down_time_stamps), so each event may lose up to 2 us there.
HTA_ROUNDING_US = 2.0


def setUpModule():
    global OUT, SEGMENTED, TMP
    if not (GPROF_RUN and PATTERNS and STANDIN_LIB_DIR):
        raise unittest.SkipTest("no gprof-run, patterns or stand-in (GPROF_RUN, PATTERNS, "
                                "STANDIN_LIB_DIR)")
    TMP = tempfile.TemporaryDirectory(prefix="gprof_consumers_standin.")
    OUT = os.path.join(TMP.name, "pageable")
    env = dict(os.environ, LD_LIBRARY_PATH=STANDIN_LIB_DIR,
               CUDASIM_KERNEL_NS="spin_kernel=%d" % (KERNEL_US * 1000))
    p = subprocess.run([GPROF_RUN, "-q", "-o", OUT, "--cupti-lib",
                        os.path.join(STANDIN_LIB_DIR, "libcupti.so.13"), "--", PATTERNS,
                        "pageable"], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("gprof-run patterns pageable failed:\n" + p.stdout + p.stderr)
    # The same dump rendered segment by segment (the path of a long run's dump, forced here).
    SEGMENTED = os.path.join(TMP.name, "segmented")
    os.makedirs(SEGMENTED)
    for name in os.listdir(OUT):
        if name.endswith(".gpdump"):
            shutil.copy(os.path.join(OUT, name), SEGMENTED)
    p = subprocess.run([GPROF_RUN, "report", SEGMENTED, "-q", "--segment-render-mb", "0"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("gprof-run report --segment-render-mb 0 failed:\n" + p.stderr)


def tearDownModule():
    TMP.cleanup()


@needs_consumers
class TensorBoardPluginReadsTheCudaTrace(unittest.TestCase):
    def test_step_breakdown_kernel_memcpy_and_step_totals_equal_ours(self):
        # Compared: Kernel, Memcpy and the step's total, to 0.01 us (the trace writes times to
        # the nanosecond). Not compared: Runtime, CPU Exec, Other: the plugin knows the API
        # category only by its old name `runtime`, not `cuda_runtime` (what Kineto and gprof-run
        # write), and counts no NVTX range as CPU Exec (docs/FINDINGS.md, step-time breakdown).
        # The plugin also takes the GPU-side twin of each step (gpu_user_annotation
        # ProfilerStep#N) for a step of its own: one host step and one GPU step per number.
        findings = load_json(os.path.join(OUT, "findings.json"))
        ours = {s["step"]: s for s in findings["step_breakdown"]}
        self.assertEqual(sorted(ours), list(range(STEPS)))
        plugin = tensorboard_steps(load_json(os.path.join(OUT, "trace.json")))
        self.assertEqual(sorted({int(n) for n, _ in plugin}), list(range(STEPS)))
        for name, costs in plugin:
            o = ours[int(name)]
            self.assertAlmostEqual(costs["Kernel"], KERNEL_US, delta=0.01)
            self.assertAlmostEqual(costs["Memcpy"], COPY_US, delta=0.01)
            self.assertAlmostEqual(costs["Kernel"], o["kernel_us"], delta=0.01)
            self.assertAlmostEqual(costs["Memcpy"], o["memcpy_us"], delta=0.01)
            self.assertEqual(costs["Memset"], 0)
        # The host step of each number has our step's total; the GPU twin is shorter.
        for step, o in ours.items():
            totals = [c["Total"] for n, c in plugin if int(n) == step]
            self.assertTrue(any(abs(t - o["wall_us"]) < 0.01 for t in totals),
                            (step, totals, o["wall_us"]))

    def test_kernel_view_reads_the_kernels_launch_and_occupancy_fields(self):
        # The plugin's kernel table: spin_kernel 10 times, 300 us each. Its blocks per SM and
        # occupancy are the trace's args: 1 block on 132 SMs = 0.0076, written to 2 decimals
        # (0.01); 1 resident warp of the SM's 2,048 / 32 = 64 slots = 1.56 %, written truncated
        # (1), as Kineto writes them. Device 0 is the only GPU, named by deviceProperties.
        data = tensorboard_profile(load_json(os.path.join(OUT, "trace.json")), analyze=True)
        stat = data.kernel_stat
        self.assertEqual(list(stat.index), [KERNEL])
        row = stat.loc[KERNEL]
        self.assertEqual(row["count"], STEPS)
        self.assertAlmostEqual(row["sum"], STEPS * KERNEL_US, delta=0.01)
        self.assertAlmostEqual(row["blocks_per_sm"], round(1 / 132, 2))
        self.assertEqual(row["occupancy"], int(100 * 1 / (2048 / 32)))
        self.assertEqual(sorted(data.gpu_metrics_parser.gpu_ids), [0])
        self.assertEqual(data.device_props[0]["numSms"], 132)


@needs_consumers
class HtaReadsTheCudaTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # One rank: the trace has no distributedInfo, which HTA takes for rank 0.
        cls.hta = hta_analysis({0: os.path.join(OUT, "trace.json")}, OUT)

    def test_profiler_steps_are_the_programs_steps(self):
        self.assertEqual([int(s) for s in self.hta.get_profiler_steps()], list(range(STEPS)))

    def test_kernel_breakdown_counts_the_kernels_and_copies_with_their_time(self):
        with quiet():
            _, kernels = self.hta.get_gpu_kernel_breakdown(visualize=False)
        by_name = {r["name"]: r for _, r in kernels.iterrows()}
        self.assertEqual(sorted(by_name), sorted([KERNEL, "Memcpy HtoD (Pageable -> Device)"]))
        kernel, copy = by_name[KERNEL], by_name["Memcpy HtoD (Pageable -> Device)"]
        self.assertEqual(kernel["kernel_type"], "COMPUTATION")
        self.assertEqual(copy["kernel_type"], "MEMORY")
        self.assertLessEqual(kernel["sum (us)"], STEPS * KERNEL_US)
        self.assertGreater(kernel["sum (us)"], STEPS * (KERNEL_US - HTA_ROUNDING_US))
        self.assertLessEqual(copy["sum (us)"], STEPS * COPY_US)
        self.assertGreater(copy["sum (us)"], STEPS * (COPY_US - HTA_ROUNDING_US))

    def test_temporal_breakdown_compute_time_is_the_kernels_time(self):
        # The kernels never overlap (one stream), so HTA's compute time is their sum; its
        # non-compute time holds the copies (and the stream syncs, which HTA counts as GPU
        # events, as in Kineto's traces); the three parts add up to its GPU time.
        with quiet():
            t = self.hta.get_temporal_breakdown(visualize=False).iloc[0]
        self.assertEqual(t["rank"], 0)
        self.assertLessEqual(t["compute_time(us)"], STEPS * KERNEL_US)
        self.assertGreater(t["compute_time(us)"], STEPS * (KERNEL_US - HTA_ROUNDING_US))
        self.assertGreater(t["non_compute_time(us)"], STEPS * (COPY_US - HTA_ROUNDING_US))
        self.assertEqual(t["idle_time(us)"] + t["compute_time(us)"] + t["non_compute_time(us)"],
                         t["kernel_time(us)"])


@needs_consumers
class ConsumersReadASegmentedRendersTrace(unittest.TestCase):
    """The trace a long run's dump gets (written segment by segment, launcher/render/
    segmented_render.h) reads in HTA and the plugin as the whole render's does: the same kernels
    and copies, counts and times."""

    def test_tensorboard_kernel_view_is_the_whole_traces(self):
        whole = tensorboard_profile(load_json(os.path.join(OUT, "trace.json")), analyze=True)
        seg = tensorboard_profile(load_json(os.path.join(SEGMENTED, "trace.json")), analyze=True)
        self.assertEqual(list(seg.kernel_stat.index), [KERNEL])
        self.assertEqual(seg.kernel_stat.loc[KERNEL]["count"], STEPS)
        for column in ("count", "sum", "blocks_per_sm", "occupancy"):
            self.assertEqual(seg.kernel_stat.loc[KERNEL][column],
                             whole.kernel_stat.loc[KERNEL][column], column)

    def test_hta_kernel_breakdown_is_the_whole_traces(self):
        breakdowns = []
        for out in (OUT, SEGMENTED):
            hta = hta_analysis({0: os.path.join(out, "trace.json")}, out)
            with quiet():
                _, kernels = hta.get_gpu_kernel_breakdown(visualize=False)
            breakdowns.append({r["name"]: (r["sum (us)"], r["mean (us)"], r["max (us)"])
                               for _, r in kernels.iterrows()})
            self.assertEqual([int(s) for s in hta.get_profiler_steps()], list(range(STEPS)))
        self.assertEqual(breakdowns[1], breakdowns[0])
        self.assertEqual(sorted(breakdowns[1]), sorted([KERNEL, "Memcpy HtoD (Pageable -> Device)"]))


if __name__ == "__main__":
    unittest.main()
