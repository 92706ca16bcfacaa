// Hand-derived expectations for every golden case. Each value below was worked out by reading the
// case's input.json (the derivation is in the comment above it), never by running the exporters,
// so a regenerated expected file (GPROF_UPDATE_GOLDEN=1) cannot make a wrong output pass. Each
// test checks both the fresh render and the checked-in table.txt / trace.json.
//
// Conventions used in the derivations: input times are ns after time_base_ns; every case has
// info.start = 0, the earliest time, so trace "ts" is (input ns) / 1000 in us and "dur" likewise.
// Host events sit on (pid, OS tid); GPU work on (pid = device, tid = stream); a
// gpu_user_annotation span is one per (range, stream) and runs from the first start to the last
// end of the GPU work launched by API calls inside the range on its thread (trace_plan.cpp). In
// the table, Self CPU = duration minus the host children (ranges and API calls) on the same
// thread; CUDA total of a range = GPU time launched inside it at any depth; "auto" sorts by Self
// CUDA when there is GPU data (else Self CPU), descending, ties in name (byte) order
// (exporters.h, table.cpp).
#include <gtest/gtest.h>

#include <set>

#include "tests/golden/golden_util.h"

namespace gprof::golden {
namespace {

using nlohmann::json;

constexpr uint64_t kPid = 4242;  // info.pid of every case

// Runs `check` on the fresh render and on the checked-in files of case `name`.
template <typename Check>
void ForBothOutputs(const std::string& name, Check check) {
  for (const CaseOutputs& o : {RenderCase(name), ExpectedFiles(name)}) {
    SCOPED_TRACE(name + ", " + o.source);
    check(o);
  }
}

// The one "X" event (cat, name) at ts, with this duration and track; returns it.
json ExpectSlice(const json& trace, const std::string& cat, const std::string& name, double ts_us,
                 double dur_us, uint64_t pid, uint64_t tid) {
  const json e = Slice(trace, cat, name, ts_us);
  if (!e.is_object()) return e;
  EXPECT_NEAR(e.at("dur").get<double>(), dur_us, 5e-4) << e;
  EXPECT_EQ(e.at("pid").get<uint64_t>(), pid) << e;
  EXPECT_EQ(e.at("tid").get<uint64_t>(), tid) << e;
  return e;
}

// The correlation ids of the ac2g flows: bind_id - 2^32 of the slices carrying `dir`
// ("flow_out": launching calls, "flow_in": GPU records).
std::set<uint32_t> FlowIds(const json& trace, const char* dir) {
  std::set<uint32_t> ids;
  for (const json& e : Events(trace, "X")) {
    if (!e.value(dir, false)) continue;
    ids.insert(static_cast<uint32_t>(e.at("bind_id").get<uint64_t>() - (uint64_t{1} << 32)));
  }
  return ids;
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// nested_two_threads/input.json:
//   MainThread 4242: forward 0..10 ms { layer1 1..4 ms { launch #1 2.000..2.010 ms }
//                                        layer2 5..9 ms { launch #2 6.000..6.012 ms } }
//   worker 4250:     forward 2..6 ms { load 3..5 ms { launch #3 3.500..3.508 ms } }
//   kernels: #1 relu_f 3.0..3.5 ms on stream 7, #2 relu_f 6.1..6.4 ms on stream 7,
//            #3 copy 3.6..3.7 ms on stream 13; all on device 0.
TEST(GoldenExpectations, NestedTwoThreads) {
  ForBothOutputs("nested_two_threads", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 5 ranges, 3 launches, 3 kernels, 3 flows. GPU spans: forward(main) and layer1, layer2 on
    // stream 7; forward(worker) and load on stream 13 -> 5.
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 5}, {"X cuda_runtime", 3},
                                          {"X kernel", 3}, {"X gpu_user_annotation", 5}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 3u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 3u);
    EXPECT_EQ(ProcessName(t, kPid), "train.py (pid 4242)");
    EXPECT_EQ(ProcessName(t, 0), "GPU 0 NVIDIA H200");
    EXPECT_EQ(ThreadName(t, kPid, 4242), "MainThread");
    EXPECT_EQ(ThreadName(t, kPid, 4250), "worker");
    EXPECT_EQ(ThreadName(t, 0, 7), "stream 7");
    EXPECT_EQ(ThreadName(t, 0, 13), "stream 13");

    // Ranges: forward 0..10 ms -> ts 0 dur 10000; layer1 1..4 ms -> 1000 / 3000; layer2 5..9 ms
    // -> 5000 / 4000; worker forward 2..6 ms -> 2000 / 4000; load 3..5 ms -> 3000 / 2000.
    const json fwd_main = ExpectSlice(t, "user_annotation", "forward", 0, 10000, kPid, 4242);
    const json layer1 = ExpectSlice(t, "user_annotation", "layer1", 1000, 3000, kPid, 4242);
    const json layer2 = ExpectSlice(t, "user_annotation", "layer2", 5000, 4000, kPid, 4242);
    const json fwd_worker = ExpectSlice(t, "user_annotation", "forward", 2000, 4000, kPid, 4250);
    const json load = ExpectSlice(t, "user_annotation", "load", 3000, 2000, kPid, 4250);
    ExpectInside(layer1, fwd_main);
    ExpectInside(layer2, fwd_main);
    ExpectInside(load, fwd_worker);
    // Launches: #1 2.000..2.010 ms -> 2000 / 10 in layer1; #2 6000 / 12 in layer2; #3 3500 / 8
    // in load.
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", 2000, 10, kPid, 4242), layer1);
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", 6000, 12, kPid, 4242), layer2);
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", 3500, 8, kPid, 4250), load);

    // Kernels (demangled): #1 3000 / 500 and #2 6100 / 300 on (0, 7), #3 3600 / 100 on (0, 13).
    const json k1 = ExpectSlice(t, "kernel", "relu_f(float*, int)", 3000, 500, 0, 7);
    const json k2 = ExpectSlice(t, "kernel", "relu_f(float*, int)", 6100, 300, 0, 7);
    const json k3 = ExpectSlice(t, "kernel", "copy(float*, float const*, int)", 3600, 100, 0, 13);
    ASSERT_TRUE(k1.is_object() && k3.is_object());
    EXPECT_EQ(k1["args"]["grid"], json::array({1024, 1, 1}));
    EXPECT_EQ(k1["args"]["block"], json::array({256, 1, 1}));
    EXPECT_EQ(k1["args"]["registers per thread"], 16);
    EXPECT_EQ(k3["args"]["registers per thread"], 8);
    EXPECT_EQ(k3["args"]["stream"], 13);

    // GPU spans: forward(main) launched #1 and #2 -> stream 7 from 3000 to 6400 (dur 3400);
    // layer1 -> #1 only (3000 / 500); layer2 -> #2 (6100 / 300); forward(worker) and load -> #3
    // on stream 13 (3600 / 100).
    const json g_fwd = ExpectSlice(t, "gpu_user_annotation", "forward", 3000, 3400, 0, 7);
    const json g_l1 = ExpectSlice(t, "gpu_user_annotation", "layer1", 3000, 500, 0, 7);
    const json g_l2 = ExpectSlice(t, "gpu_user_annotation", "layer2", 6100, 300, 0, 7);
    const json g_fwd_w = ExpectSlice(t, "gpu_user_annotation", "forward", 3600, 100, 0, 13);
    const json g_load = ExpectSlice(t, "gpu_user_annotation", "load", 3600, 100, 0, 13);
    ExpectInside(g_l1, g_fwd);
    ExpectInside(g_l2, g_fwd);
    ExpectInside(k1, g_l1);
    ExpectInside(k2, g_l2);
    ExpectInside(g_load, g_fwd_w);
    ExpectInside(k3, g_load);

    // Flows: each launch to its kernel (correlation ids 1, 2, 3).
    ExpectFlow(t, kPid, {1, 4242, 2000, 0, 7, 3000});
    ExpectFlow(t, kPid, {2, 4242, 6000, 0, 7, 6100});
    ExpectFlow(t, kPid, {3, 4250, 3500, 0, 13, 3600});

    // Table, by Self CUDA (ties in name order). A range's Self CUDA is what it owns minus what
    // the ranges nested in it own (the innermost range that launched a kernel gets its time, as
    // torch's innermost op does): layer1 owns #1 (500 us), layer2 #2 (300 us), load #3 (100 us);
    // forward (main) owns #1 + #2 = 800 us, all of it nested (layer1 + layer2) -> 0; forward
    // (worker) owns #3, nested in load -> 0. Kernels: relu_f 500 + 300 = 800 us, copy 100 us.
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb), (std::vector<std::string>{"relu_f(float*, int)", "layer1", "layer2",
                                                      "copy(float*, float const*, int)", "load",
                                                      "cudaLaunchKernel", "forward"}));
    EXPECT_EQ(Row(tb, "layer1")["Self CUDA"], "500.000us");
    EXPECT_EQ(Row(tb, "layer2")["Self CUDA"], "300.000us");
    EXPECT_EQ(Row(tb, "load")["Self CUDA"], "100.000us");
    EXPECT_EQ(Row(tb, "forward")["Self CUDA"], "0.000us");
    // Self CUDA % is of the device rows' total (900 us), as torch's footer: layer1 55.56%.
    EXPECT_EQ(Row(tb, "layer1")["Self CUDA %"], "55.56%");
    // forward: 2 calls, CPU total 10 + 4 = 14 ms, Self CPU (10 - 3 - 4) + (4 - 2) = 5 ms; its
    // launches (any depth) ran #1 + #2 + #3 = 900 us.
    TableRow r = Row(tb, "forward");
    EXPECT_EQ(r["# of Calls"], "2");
    EXPECT_EQ(r["Self CPU"], "5.000ms");
    EXPECT_EQ(r["CPU total"], "14.000ms");
    EXPECT_EQ(r["CUDA total"], "900.000us");
    // layer1: 3 ms - the 10 us launch = 2.990 ms; layer2: 4 ms - 12 us = 3.988 ms; load:
    // 2 ms - 8 us = 1.992 ms. CUDA totals: 500, 300, 100 us.
    EXPECT_EQ(Row(tb, "layer1")["Self CPU"], "2.990ms");
    EXPECT_EQ(Row(tb, "layer1")["CUDA total"], "500.000us");
    EXPECT_EQ(Row(tb, "layer2")["Self CPU"], "3.988ms");
    EXPECT_EQ(Row(tb, "layer2")["CUDA total"], "300.000us");
    EXPECT_EQ(Row(tb, "load")["Self CPU"], "1.992ms");
    EXPECT_EQ(Row(tb, "load")["CUDA total"], "100.000us");
    // cudaLaunchKernel: 3 calls, 10 + 12 + 8 = 30 us, avg 10 us; launched 900 us of kernels.
    r = Row(tb, "cudaLaunchKernel");
    EXPECT_EQ(r["# of Calls"], "3");
    EXPECT_EQ(r["Self CPU"], "30.000us");
    EXPECT_EQ(r["CPU time avg"], "10.000us");
    EXPECT_EQ(r["CUDA total"], "900.000us");
    // relu_f: 2 calls, 800 us = 88.89% of 900 us, avg 400 us; no CPU time.
    r = Row(tb, "relu_f(float*, int)");
    EXPECT_EQ(r["# of Calls"], "2");
    EXPECT_EQ(r["Self CPU"], "0.000us");
    EXPECT_EQ(r["Self CUDA"], "800.000us");
    EXPECT_EQ(r["Self CUDA %"], "88.89%");
    EXPECT_EQ(r["CUDA time avg"], "400.000us");
    EXPECT_EQ(Row(tb, "copy(float*, float const*, int)")["Self CUDA"], "100.000us");
    // Self CPU total = the top-level ranges 10 + 4 ms; Self CUDA total = 900 us.
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 14.000ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 900.000us")) << tb;
  });
}

// compute_bound/input.json (table: sort_by cuda_time_total, row_limit 5), thread 4242:
//   gemm_loop 0.1..65 ms { cudaMalloc #1 0.1..0.4 ms; cudaLaunchKernel #2 0.50..0.52,
//   #3 0.53..0.54, #4 0.55..0.56 ms; cuLaunchKernel (driver) #5 0.57..0.58 ms;
//   cudaDeviceSynchronize #6 0.6..64 ms; cudaFree #7 64.1..64.3 ms }
//   kernels on stream 7: matmul #2 0.6..20.6, #3 20.6..40.6, #4 40.6..60.6 ms (20 ms each),
//   triton_poi_fused_add_0 #5 60.6..63.9 ms (3.3 ms); context sync #6 0.6005..63.95 ms;
//   memory: alloc 256 MiB at 0.30 ms, alloc 64 MiB at 0.35 ms, free of the first at 64.2 ms.
TEST(GoldenExpectations, ComputeBound) {
  ForBothOutputs("compute_bound", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 1 range; 6 runtime calls + 1 driver call; 4 kernels; 1 sync; one GPU span (gemm_loop on
    // stream 7); 3 memory points and the peak marker; flows for the 4 launches (#2..#5) only:
    // malloc, free and synchronize launch no GPU work.
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 1}, {"X cuda_runtime", 6},
                                          {"X cuda_driver", 1}, {"X kernel", 4},
                                          {"X cuda_sync", 1}, {"X gpu_user_annotation", 1},
                                          {"C gpu_memory", 3}, {"i gpu_memory", 1}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 4u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 4u);
    // The peak: 256 + 64 MiB = 320 MiB in use from the second allocation (0.35 ms) on.
    bool peak_seen = false;
    for (const json& e : t["traceEvents"]) {
      if (e.value("ph", "") != "i" || e.value("cat", "") != "gpu_memory") continue;
      peak_seen = true;
      EXPECT_EQ(e["name"], "peak memory in use: 320.00 MB");
      EXPECT_EQ(e["args"]["bytes"], 320ull << 20);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 350.0);
    }
    EXPECT_TRUE(peak_seen);
    // The same peak in the metadata; the case has no steps.
    EXPECT_EQ(t["gprof"]["memory"]["peak_bytes"], 320ull << 20);
    EXPECT_DOUBLE_EQ(t["gprof"]["memory"]["peak_ts"].get<double>(), 350.0);
    EXPECT_TRUE(t["gprof"]["memory"]["steps"].empty());
    EXPECT_EQ(FlowIds(t, "flow_out"), (std::set<uint32_t>{2, 3, 4, 5}));
    EXPECT_EQ(FlowIds(t, "flow_in"), (std::set<uint32_t>{2, 3, 4, 5}));
    EXPECT_EQ(t["gprof"]["cupti_library"], "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");

    const json loop = ExpectSlice(t, "user_annotation", "gemm_loop", 100, 64900, kPid, 4242);
    const json malloc_call = ExpectSlice(t, "cuda_runtime", "cudaMalloc", 100, 300, kPid, 4242);
    ExpectInside(malloc_call, loop);
    // An API call's args are its correlation id alone (the first call: 1); Kineto's "cbid" is
    // not written, the name says which call it is.
    EXPECT_EQ(malloc_call["args"], json({{"correlation", 1}}));
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaDeviceSynchronize", 600, 63400, kPid, 4242),
                 loop);
    ExpectInside(ExpectSlice(t, "cuda_driver", "cuLaunchKernel", 570, 10, kPid, 4242), loop);
    ExpectSlice(t, "cuda_runtime", "cudaFree", 64100, 200, kPid, 4242);
    // The sync record sits on the device's synchronization track (tid = no stream, 2^32 - 1):
    // 600.5 us, 63950 - 600.5 = 63349.5 us.
    ExpectSlice(t, "cuda_sync", "Context Sync", 600.5, 63349.5, 0, 4294967295u);
    EXPECT_EQ(ThreadName(t, 0, 4294967295u), "synchronization");

    // matmul: grid 528 x 256 threads, 64 registers, 16 + 32 KiB shared = 49152 B. On 132 SMs:
    // 528 / 132 = 4 blocks per SM, 4 x 256 / 32 = 32 warps, 32 / 64 (2048 threads) = 50%;
    // registers (64 x 256 x 4 = 65536) and shared memory (4 x 49152 <= 233472) allow all 4.
    // Kineto's "context" and "warps per SM" are not written (no consumer reads them), and the
    // 4 blocks per SM read "4", not "4.00".
    const json mm = ExpectSlice(t, "kernel", "matmul(float const*, float const*, float*, int)", 600,
                                20000, 0, 7);
    ASSERT_TRUE(mm.is_object());
    EXPECT_EQ(mm["args"]["shared memory"], 49152);
    EXPECT_EQ(mm["args"]["registers per thread"], 64);
    EXPECT_EQ(mm["args"]["blocks per SM"], 4);
    EXPECT_TRUE(mm["args"]["blocks per SM"].is_number_integer());
    EXPECT_FALSE(mm["args"].contains("warps per SM"));
    EXPECT_FALSE(mm["args"].contains("context"));
    EXPECT_EQ(mm["args"]["est. achieved occupancy %"], 50);
    ExpectSlice(t, "kernel", "matmul(float const*, float const*, float*, int)", 20600, 20000, 0, 7);
    ExpectSlice(t, "kernel", "matmul(float const*, float const*, float*, int)", 40600, 20000, 0, 7);
    const json triton = ExpectSlice(t, "kernel", "triton_poi_fused_add_0", 60600, 3300, 0, 7);
    // GPU span of gemm_loop: first kernel start 600 to last kernel end 63900 -> dur 63300.
    const json g_loop = ExpectSlice(t, "gpu_user_annotation", "gemm_loop", 600, 63300, 0, 7);
    ExpectInside(mm, g_loop);
    ExpectInside(triton, g_loop);

    ExpectFlow(t, kPid, {2, 4242, 500, 0, 7, 600});
    ExpectFlow(t, kPid, {4, 4242, 550, 0, 7, 40600});
    ExpectFlow(t, kPid, {5, 4242, 570, 0, 7, 60600, "cuda_driver"});

    // Bytes in use on GPU 0: 268435456 at 300 us, + 67108864 = 335544320 at 350 us, and after
    // freeing the first block 67108864 at 64200 us.
    const std::vector<json> mem = Events(t, "C", "gpu_memory", "GPU 0 memory in use");
    ASSERT_EQ(mem.size(), 3u);
    EXPECT_DOUBLE_EQ(mem[0]["ts"].get<double>(), 300.0);
    EXPECT_EQ(mem[0]["args"]["bytes"], 268435456);
    EXPECT_DOUBLE_EQ(mem[1]["ts"].get<double>(), 350.0);
    EXPECT_EQ(mem[1]["args"]["bytes"], 335544320);
    EXPECT_DOUBLE_EQ(mem[2]["ts"].get<double>(), 64200.0);
    EXPECT_EQ(mem[2]["args"]["bytes"], 67108864);

    // Table by CUDA total, 5 rows: gemm_loop 63.3 ms; cudaLaunchKernel and matmul 60 ms (name
    // order); cuLaunchKernel and triton 3.3 ms. Cut: cudaDeviceSynchronize, cudaMalloc,
    // cudaFree, Context Sync (no CUDA time).
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb), (std::vector<std::string>{
                                "gemm_loop", "cudaLaunchKernel",
                                "matmul(float const*, float const*, float*, int)",
                                "cuLaunchKernel", "triton_poi_fused_add_0"}));
    // gemm_loop: 64.9 ms minus its calls 300 + 20 + 10 + 10 + 10 + 63400 + 200 = 63950 us ->
    // Self CPU 950 us; CUDA total 3 x 20 + 3.3 = 63.3 ms.
    TableRow r = Row(tb, "gemm_loop");
    EXPECT_EQ(r["# of Calls"], "1");
    EXPECT_EQ(r["Self CPU"], "950.000us");
    EXPECT_EQ(r["CPU total"], "64.900ms");
    EXPECT_EQ(r["CUDA total"], "63.300ms");
    // cudaLaunchKernel: 3 calls, 20 + 10 + 10 = 40 us (avg 13.333 us), launched 60 ms.
    r = Row(tb, "cudaLaunchKernel");
    EXPECT_EQ(r["# of Calls"], "3");
    EXPECT_EQ(r["Self CPU"], "40.000us");
    EXPECT_EQ(r["CPU time avg"], "13.333us");
    EXPECT_EQ(r["CUDA total"], "60.000ms");
    // matmul: 3 calls, 60 ms = 94.79% of 63.3 ms; triton 3.3 ms = 5.21%.
    r = Row(tb, "matmul(float const*, float const*, float*, int)");
    EXPECT_EQ(r["# of Calls"], "3");
    EXPECT_EQ(r["Self CUDA"], "60.000ms");
    EXPECT_EQ(r["Self CUDA %"], "94.79%");
    EXPECT_EQ(Row(tb, "triton_poi_fused_add_0")["Self CUDA %"], "5.21%");
    EXPECT_EQ(Row(tb, "cuLaunchKernel")["Self CPU"], "10.000us");
    EXPECT_EQ(Row(tb, "cuLaunchKernel")["CUDA total"], "3.300ms");
    // Totals count every row, shown or cut: Self CPU 950 + 40 + 10 + 300 + 63400 + 200 us =
    // 64.9 ms; Self CUDA 63.3 ms.
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 64.900ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 63.300ms")) << tb;
  });
}

// escaping_names/input.json, thread 4242 'main "thread"', program 'weird "names"':
//   ranges 'quote " and backslash \ here' 0..4 ms; 'control \x01 tab \t newline \n end'
//   0.1..0.9 ms; 'invalid \xff\xfe utf8' 1.0..1.9 ms; 'truncated \xe2\x82 sequence' 2.0..2.1 ms;
//   'ünïcødé ✓ 名前' 2.2..2.3 ms; a 77-character name 2.4..2.5 ms; mark at 3 ms with quotes and
//   \x1f; launch #1 3.10..3.11 ms; kernel '_Zbogus_not_really_mangled' #1 3.2..3.3 ms stream 7.
TEST(GoldenExpectations, EscapingNames) {
  const std::string kLong =
      "a_very_long_range_name_that_is_much_wider_than_fifty_five_characters_in_total";
  const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD, one per invalid byte (utf8.h)
  ForBothOutputs("escaping_names", [&](const CaseOutputs& o) {
    const json& t = o.trace;
    // 6 ranges, 1 mark, 1 launch, 1 kernel, the quote range's GPU span, 1 flow. (The trace
    // parsed at all: nlohmann rejects invalid UTF-8 and bad escapes.)
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 6}, {"i user_annotation", 1},
                                          {"X cuda_runtime", 1}, {"X kernel", 1},
                                          {"X gpu_user_annotation", 1}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 1u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 1u);
    EXPECT_EQ(ProcessName(t, kPid), "weird \"names\" (pid 4242)");
    EXPECT_EQ(ThreadName(t, kPid, 4242), "main \"thread\"");
    // Names survive the JSON round trip byte for byte, invalid bytes become U+FFFD each.
    const json quote =
        ExpectSlice(t, "user_annotation", "quote \" and backslash \\ here", 0, 4000, kPid, 4242);
    ExpectInside(ExpectSlice(t, "user_annotation", "control \x01 tab \t newline \n end", 100, 800,
                             kPid, 4242),
                 quote);
    ExpectSlice(t, "user_annotation", "invalid " + kFffd + kFffd + " utf8", 1000, 900, kPid, 4242);
    ExpectSlice(t, "user_annotation", "truncated " + kFffd + kFffd + " sequence", 2000, 100, kPid,
                4242);
    ExpectSlice(t, "user_annotation", "ünïcødé ✓ 名前", 2200, 100, kPid, 4242);
    ExpectSlice(t, "user_annotation", kLong, 2400, 100, kPid, 4242);  // never cut in the trace
    const std::vector<json> marks = Events(t, "i", "user_annotation");
    ASSERT_EQ(marks.size(), 1u);
    EXPECT_EQ(marks[0]["name"], "mark with \"quotes\" and \x1f");
    EXPECT_DOUBLE_EQ(marks[0]["ts"].get<double>(), 3000.0);
    // A name that does not demangle stays as recorded.
    const json k = ExpectSlice(t, "kernel", "_Zbogus_not_really_mangled", 3200, 100, 0, 7);
    ExpectInside(k, ExpectSlice(t, "gpu_user_annotation", "quote \" and backslash \\ here", 3200,
                                100, 0, 7));
    ExpectFlow(t, kPid, {1, 4242, 3100, 0, 7, 3200});

    // Table: the kernel (100 us Self CUDA) and the quote range, innermost range around its
    // launch (Self CUDA 100 us, tie in name order: '_' < 'q'), first; then byte order of the
    // recorded names ('a' < 'c' < 'cu' < 'i' < 't' < 0xC3). Control characters show as '?',
    // invalid bytes as U+FFFD, and names longer than 55 columns are cut to 52 + "...".
    const std::string& tb = o.table;
    const std::string cut = kLong.substr(0, 52) + "...";
    EXPECT_EQ(RowNames(tb),
              (std::vector<std::string>{"_Zbogus_not_really_mangled",
                                        "quote \" and backslash \\ here", cut,
                                        "control ? tab ? newline ? end", "cudaLaunchKernel",
                                        "invalid " + kFffd + kFffd + " utf8",
                                        "truncated " + kFffd + kFffd + " sequence",
                                        "ünïcødé ✓ 名前"}));
    // quote: 4 ms - (800 + 900 + 100 + 100 + 100 us of ranges + 10 us launch) = 1.990 ms.
    TableRow r = Row(tb, "quote \" and backslash \\ here");
    EXPECT_EQ(r["Self CPU"], "1.990ms");
    EXPECT_EQ(r["CPU total"], "4.000ms");
    EXPECT_EQ(r["CUDA total"], "100.000us");
    EXPECT_EQ(r["Self CUDA"], "100.000us");
    EXPECT_EQ(Row(tb, "control ? tab ? newline ? end")["Self CPU"], "800.000us");
    EXPECT_EQ(Row(tb, cut)["Self CPU"], "100.000us");
    EXPECT_EQ(Row(tb, "_Zbogus_not_really_mangled")["Self CUDA"], "100.000us");
    EXPECT_EQ(Row(tb, "_Zbogus_not_really_mangled")["# of Calls"], "1");
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 4.000ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 100.000us")) << tb;
  });
}

// memcpy_memset_kinds/input.json, thread 4242, range 'copies' 0.05..9.25 ms around everything:
//   #1..#14 cudaMemcpyAsync at 0.1 + 0.5 (n - 1) ms, 8 us each; copy #n on stream 7 starts
//   10 us after its call, moves n MiB in n x 20 us: HtoD Pageable, HtoD Pinned, DtoH Pageable,
//   DtoH Pinned, DtoD, HtoH, PtoP (device 0 -> 1), HtoA, AtoH, AtoA, AtoD, DtoA, HtoD Managed,
//   Unknown. #15..#17 cudaMemsetAsync (5 us) at 7.1, 7.6, 8.1 ms: 4 MiB memsets of Device,
//   Managed, Pinned memory, 4 us each, 10 us after the call. #18 (8.600..8.605 ms) and #19
//   (8.606..8.609 ms) cudaMemcpyAsync: 1e6 B HtoD Pinned 8.61..8.66 ms and DtoH Pinned
//   8.64..8.69 ms, both on stream 13 (they overlap). #20 cudaStreamSynchronize 9.1..9.2 ms,
//   stream sync of stream 13 9.101..9.199 ms.
TEST(GoldenExpectations, MemcpyMemsetKinds) {
  ForBothOutputs("memcpy_memset_kinds", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 1 range, 16 + 3 + 1 = 20 runtime calls, 16 copies, 3 memsets, 1 sync, GPU spans of
    // 'copies' on stream 7 and on stream 13, 19 flows (#1..#19; the synchronize launches none).
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 1}, {"X cuda_runtime", 20},
                                          {"X gpu_memcpy", 16}, {"X gpu_memset", 3},
                                          {"X cuda_sync", 1}, {"X gpu_user_annotation", 2}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 19u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 19u);
    // The peer copy's destination GPU 1 is listed as a process too.
    EXPECT_EQ(ProcessName(t, 1), "GPU 1 NVIDIA H200");
    // Copy #n: call at 100 + 500 (n - 1) us, record 10 us later lasting 20 n us; bandwidth
    // n MiB / 20 n us = 1048576 / 20000 B/ns = 52.429 GB/s for every one of them.
    const char* kNames[14] = {
        "Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pinned -> Device)",
        "Memcpy DtoH (Device -> Pageable)", "Memcpy DtoH (Device -> Pinned)",
        "Memcpy DtoD (Device -> Device)",   "Memcpy HtoH (Pinned -> Pinned)",
        "Memcpy PtoP (Device -> Device)",   "Memcpy HtoA (Pinned -> Array)",
        "Memcpy AtoH (Array -> Pinned)",    "Memcpy AtoA (Array -> Array)",
        "Memcpy AtoD (Array -> Device)",    "Memcpy DtoA (Device -> Array)",
        "Memcpy HtoD (Managed -> Device)",  "Memcpy Unknown (Unknown -> Unknown)"};
    for (uint32_t n = 1; n <= 14; ++n) {
      SCOPED_TRACE("copy #" + std::to_string(n));
      const double call = 100 + 500.0 * (n - 1);
      const json c = ExpectSlice(t, "gpu_memcpy", kNames[n - 1], call + 10, 20.0 * n, 0, 7);
      if (!c.is_object()) continue;
      EXPECT_EQ(c["args"]["bytes"].get<uint64_t>(), n * 1048576u);
      EXPECT_NEAR(c["args"]["memory bandwidth (GB/s)"].get<double>(), 52.429, 5e-4);
      ExpectFlow(t, kPid, {n, 4242, call, 0, 7, call + 10, "cuda_runtime", "gpu_memcpy"});
    }
    // Memsets #15..#17: 4 MiB in 4 us = 4194304 / 4000 = 1048.576 GB/s.
    const char* kMemsets[3] = {"Memset (Device)", "Memset (Managed)", "Memset (Pinned)"};
    for (uint32_t i = 0; i < 3; ++i) {
      const double call = 7100 + 500.0 * i;
      const json m = ExpectSlice(t, "gpu_memset", kMemsets[i], call + 10, 4, 0, 7);
      if (m.is_object()) {
        EXPECT_NEAR(m["args"]["memory bandwidth (GB/s)"].get<double>(), 1048.576, 5e-4);
      }
      ExpectFlow(t, kPid, {15 + i, 4242, call, 0, 7, call + 10, "cuda_runtime", "gpu_memset"});
    }
    // Stream 13: #18 keeps the stream's track; #19 starts before #18 ends, so it moves to the
    // first overflow track (first synthetic tid, 2^31). 1e6 B / 50 us = 20 GB/s.
    const json c18 =
        ExpectSlice(t, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 8610, 50, 0, 13);
    ExpectSlice(t, "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 8640, 50, 0, 2147483648u);
    EXPECT_EQ(ThreadName(t, 0, 2147483648u), "stream 13 (overlapping work 1)");
    if (c18.is_object()) {
      EXPECT_NEAR(c18["args"]["memory bandwidth (GB/s)"].get<double>(), 20.0, 5e-4);
    }
    ExpectFlow(t, kPid, {18, 4242, 8600, 0, 13, 8610, "cuda_runtime", "gpu_memcpy"});
    ExpectFlow(t, kPid, {19, 4242, 8606, 0, 2147483648u, 8640, "cuda_runtime", "gpu_memcpy"});
    // The stream sync is drawn on stream 13: 9101 us, 98 us.
    ExpectSlice(t, "cuda_sync", "Stream Sync", 9101, 98, 0, 13);
    // GPU spans of 'copies': stream 7 from copy #1's start 110 us to memset #17's end 8114 us
    // (8004 us); stream 13 from 8610 to 8690 us (80 us).
    const json range = ExpectSlice(t, "user_annotation", "copies", 50, 9200, kPid, 4242);
    ExpectSlice(t, "gpu_user_annotation", "copies", 110, 8004, 0, 7);
    ExpectInside(c18, ExpectSlice(t, "gpu_user_annotation", "copies", 8610, 80, 0, 13));
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaStreamSynchronize", 9100, 100, kPid, 4242),
                 range);

    // Table by Self CUDA: 'copies', the innermost range around every copy and memset, owns
    // them all (2.212 ms, below); the 14 stream-7 kinds take 20 n us (copy #n), except that HtoD
    // Pinned (40 + 50 = 90 us) and DtoH Pinned (80 + 50 = 130 us) also hold the stream-13 copies
    // (2 calls each); then the memsets (4 us, name order), then the rest (no GPU time, byte
    // order: uppercase first).
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb),
              (std::vector<std::string>{
                  "copies", "Memcpy Unknown (Unknown -> Unknown)", "Memcpy HtoD (Managed -> Device)",
                  "Memcpy DtoA (Device -> Array)", "Memcpy AtoD (Array -> Device)",
                  "Memcpy AtoA (Array -> Array)", "Memcpy AtoH (Array -> Pinned)",
                  "Memcpy HtoA (Pinned -> Array)", "Memcpy PtoP (Device -> Device)",
                  "Memcpy DtoH (Device -> Pinned)", "Memcpy HtoH (Pinned -> Pinned)",
                  "Memcpy DtoD (Device -> Device)", "Memcpy HtoD (Pinned -> Device)",
                  "Memcpy DtoH (Device -> Pageable)", "Memcpy HtoD (Pageable -> Device)",
                  "Memset (Device)", "Memset (Managed)", "Memset (Pinned)", "Stream Sync",
                  "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize"}));
    TableRow r = Row(tb, "Memcpy DtoH (Device -> Pinned)");
    EXPECT_EQ(r["# of Calls"], "2");
    EXPECT_EQ(r["Self CUDA"], "130.000us");
    EXPECT_EQ(r["CUDA time avg"], "65.000us");
    // Self CUDA total: 20 x (1 + ... + 14) = 2100 us + 100 us on stream 13 + 3 x 4 us = 2212 us.
    // Unknown: 280 / 2212 = 12.66%.
    EXPECT_EQ(Row(tb, "Memcpy Unknown (Unknown -> Unknown)")["Self CUDA %"], "12.66%");
    EXPECT_EQ(Row(tb, "Memcpy HtoD (Pinned -> Device)")["Self CUDA"], "90.000us");
    // cudaMemcpyAsync: 16 calls, 14 x 8 + 5 + 3 = 120 us (avg 7.5 us), launched 2100 + 100 us.
    r = Row(tb, "cudaMemcpyAsync");
    EXPECT_EQ(r["# of Calls"], "16");
    EXPECT_EQ(r["Self CPU"], "120.000us");
    EXPECT_EQ(r["CPU time avg"], "7.500us");
    EXPECT_EQ(r["CUDA total"], "2.200ms");
    r = Row(tb, "cudaMemsetAsync");
    EXPECT_EQ(r["# of Calls"], "3");
    EXPECT_EQ(r["Self CPU"], "15.000us");
    EXPECT_EQ(r["CUDA total"], "12.000us");
    // copies: 9.2 ms - (120 + 15 + 100 us of calls) = 8.965 ms; CUDA total 2.212 ms.
    r = Row(tb, "copies");
    EXPECT_EQ(r["Self CPU"], "8.965ms");
    EXPECT_EQ(r["CPU total"], "9.200ms");
    EXPECT_EQ(r["CUDA total"], "2.212ms");
    EXPECT_EQ(r["Self CUDA"], "2.212ms");  // no range nested in it
    // The stream sync record: 98 us of CPU total (the host waited), no Self CPU.
    EXPECT_EQ(Row(tb, "Stream Sync")["CPU total"], "98.000us");
    EXPECT_EQ(Row(tb, "Stream Sync")["Self CPU"], "0.000us");
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 9.200ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 2.212ms")) << tb;
  });
}

// overhead_bound/input.json, thread 4242: train_step 0..6.5 ms; 200 repeats (k = 0..199,
//   period 30 us): cudaLaunchKernel #(k+1) at 10 + 30k .. 35 + 30k us (25 us), its kernel
//   add_scalar 40 + 30k .. 42 + 30k us (2 us) on stream 7; cudaDeviceSynchronize #10000
//   6.100..6.110 ms with a context sync 6.1005..6.109 ms; a CUPTI buffer-request overhead
//   3000.02..3000.04 us on thread 4242.
TEST(GoldenExpectations, OverheadBound) {
  ForBothOutputs("overhead_bound", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 1 range, 200 launches + 1 synchronize, 200 kernels, 1 sync, 1 overhead, one GPU span,
    // 200 flows.
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 1}, {"X cuda_runtime", 201},
                                          {"X kernel", 200}, {"X gpu_user_annotation", 1},
                                          {"X cuda_sync", 1}, {"X overhead", 1}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 200u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 200u);
    // Every launch k links to its own kernel: call at 10 + 30k us, kernel at 40 + 30k us.
    const std::vector<json> kernels = Events(t, "X", "kernel");
    for (uint32_t k = 0; k < 200; k += 37) {
      ExpectFlow(t, kPid, {k + 1, 4242, 10 + 30.0 * k, 0, 7, 40 + 30.0 * k});
    }
    ExpectFlow(t, kPid, {200, 4242, 5980, 0, 7, 6010});
    for (const json& k : kernels) EXPECT_NEAR(k["dur"].get<double>(), 2.0, 5e-4) << k;
    // GPU span of train_step: first kernel 40 us to last kernel end 6012 us -> 5972 us.
    const json range = ExpectSlice(t, "user_annotation", "train_step", 0, 6500, kPid, 4242);
    const json span = ExpectSlice(t, "gpu_user_annotation", "train_step", 40, 5972, 0, 7);
    for (const json& k : kernels) ExpectInside(k, span);
    ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", 5980, 25, kPid, 4242), range);
    ExpectSlice(t, "cuda_sync", "Context Sync", 6100.5, 8.5, 0, 4294967295u);
    // CUPTI's overhead gets a track of its own next to the thread: 3000.020 us, 0.020 us.
    const std::vector<json> overhead = Events(t, "X", "overhead");
    ASSERT_EQ(overhead.size(), 1u);
    EXPECT_EQ(overhead[0]["name"], "CUPTI overhead: activity buffer request");
    EXPECT_EQ(overhead[0]["pid"], kPid);
    EXPECT_NEAR(overhead[0]["ts"].get<double>(), 3000.02, 5e-4);
    EXPECT_NEAR(overhead[0]["dur"].get<double>(), 0.02, 5e-4);
    EXPECT_EQ(ThreadName(t, kPid, overhead[0]["tid"].get<uint64_t>()),
              "CUPTI overhead (MainThread)");

    // Table: add_scalar and train_step (the range around all 200 launches, no range inside it)
    // have all the Self CUDA, 400 us each, name order between them; then name order ("Context
    // Sync" sorts before the lowercase names). No row for CUPTI overhead. The footer counts the
    // kernel rows only: 400 us, not 800.
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb), (std::vector<std::string>{"add_scalar(float*, float)", "train_step",
                                                      "Context Sync", "cudaDeviceSynchronize",
                                                      "cudaLaunchKernel"}));
    // 200 kernels x 2 us = 400 us; 200 launches x 25 us = 5 ms (76.92% of 6.5 ms).
    TableRow r = Row(tb, "add_scalar(float*, float)");
    EXPECT_EQ(r["# of Calls"], "200");
    EXPECT_EQ(r["Self CUDA"], "400.000us");
    EXPECT_EQ(r["CUDA time avg"], "2.000us");
    r = Row(tb, "cudaLaunchKernel");
    EXPECT_EQ(r["# of Calls"], "200");
    EXPECT_EQ(r["Self CPU"], "5.000ms");
    EXPECT_EQ(r["Self CPU %"], "76.92%");
    EXPECT_EQ(r["CPU time avg"], "25.000us");
    EXPECT_EQ(r["CUDA total"], "400.000us");
    // train_step: 6.5 ms - 5 ms - 10 us = 1.490 ms.
    r = Row(tb, "train_step");
    EXPECT_EQ(r["Self CPU"], "1.490ms");
    EXPECT_EQ(r["CPU total"], "6.500ms");
    EXPECT_EQ(r["CUDA total"], "400.000us");
    EXPECT_EQ(r["Self CUDA"], "400.000us");
    EXPECT_EQ(Row(tb, "cudaDeviceSynchronize")["Self CPU"], "10.000us");
    EXPECT_EQ(Row(tb, "Context Sync")["CPU total"], "8.500us");
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 6.500ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 400.000us")) << tb;
  });
}

// schedule_window_steps/input.json: window cycle 1, steps 3..5, partial, rank 1 of 2, one late
//   window start. Steps 3, 4, 5 at 0..3, 3..6, 6..9 ms on thread 4242; in each step s
//   (k = s - 3, shift 3k ms, correlation + 10k): forward 0.1..1.2 ms { launch #1 0.20..0.21 ms },
//   backward 1.3..2.8 ms { launch #2 1.40..1.41 ms }; kernels fwd #1 0.3..1.1 ms, bwd #2
//   1.5..2.9 ms, both on stream 7.
TEST(GoldenExpectations, ScheduleWindowSteps) {
  ForBothOutputs("schedule_window_steps", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 3 steps + 6 ranges; 6 launches; 6 kernels; GPU spans: 3 steps + 3 forward + 3 backward;
    // 6 flows.
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 9}, {"X cuda_runtime", 6},
                                          {"X kernel", 6}, {"X gpu_user_annotation", 9}}));
    // Its flows: on the calls ("flow_out") and on the GPU records ("flow_in"), one each.
    EXPECT_EQ(FlowIds(t, "flow_out").size(), 6u);
    EXPECT_EQ(FlowIds(t, "flow_in").size(), 6u);
    EXPECT_EQ(FlowIds(t, "flow_out"), (std::set<uint32_t>{1, 2, 11, 12, 21, 22}));
    EXPECT_EQ(t["distributedInfo"]["rank"], 1);
    EXPECT_EQ(t["distributedInfo"]["world_size"], 2);
    EXPECT_EQ(t["gprof"]["rank"], 1);
    EXPECT_EQ(t["gprof"]["world_size"], 2);
    EXPECT_EQ(t["gprof"]["cycle"], 1);
    EXPECT_EQ(t["gprof"]["first_step"], 3);
    EXPECT_EQ(t["gprof"]["last_step"], 5);
    EXPECT_EQ(t["gprof"]["partial"], true);
    EXPECT_EQ(t["gprof"]["counters"]["window_starts_late"], 1);
    for (uint32_t k = 0; k < 3; ++k) {
      SCOPED_TRACE("step " + std::to_string(3 + k));
      const double s = 3000.0 * k;
      const std::string step = "ProfilerStep#" + std::to_string(3 + k);
      const json st = ExpectSlice(t, "user_annotation", step, s, 3000, kPid, 4242);
      const json fwd = ExpectSlice(t, "user_annotation", "forward", s + 100, 1100, kPid, 4242);
      const json bwd = ExpectSlice(t, "user_annotation", "backward", s + 1300, 1500, kPid, 4242);
      ExpectInside(fwd, st);
      ExpectInside(bwd, st);
      ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", s + 200, 10, kPid, 4242),
                   fwd);
      ExpectInside(ExpectSlice(t, "cuda_runtime", "cudaLaunchKernel", s + 1400, 10, kPid, 4242),
                   bwd);
      // GPU spans: the step covers fwd start (s + 300) to bwd end (s + 2900) -> 2600 us;
      // forward = its kernel (800 us), backward = its kernel (1400 us, past the CPU range).
      const json g_step = ExpectSlice(t, "gpu_user_annotation", step, s + 300, 2600, 0, 7);
      const json g_fwd = ExpectSlice(t, "gpu_user_annotation", "forward", s + 300, 800, 0, 7);
      const json g_bwd = ExpectSlice(t, "gpu_user_annotation", "backward", s + 1500, 1400, 0, 7);
      ExpectInside(g_fwd, g_step);
      ExpectInside(g_bwd, g_step);
      ExpectInside(ExpectSlice(t, "kernel", "fwd(float*)", s + 300, 800, 0, 7), g_fwd);
      ExpectInside(ExpectSlice(t, "kernel", "bwd(float*)", s + 1500, 1400, 0, 7), g_bwd);
      ExpectFlow(t, kPid, {1 + 10 * k, 4242, s + 200, 0, 7, s + 300});
      ExpectFlow(t, kPid, {2 + 10 * k, 4242, s + 1400, 0, 7, s + 1500});
    }

    // Table by Self CUDA (ties in name order): bwd 3 x 1.4 = 4.2 ms and backward, the innermost
    // range around its launch, the same; fwd 3 x 0.8 = 2.4 ms and forward likewise; the steps own
    // by time and have no Self CUDA; then name order.
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb), (std::vector<std::string>{"backward", "bwd(float*)", "forward",
                                                      "fwd(float*)", "ProfilerStep*",
                                                      "cudaLaunchKernel"}));
    EXPECT_EQ(Row(tb, "backward")["Self CUDA"], "4.200ms");
    EXPECT_EQ(Row(tb, "forward")["Self CUDA"], "2.400ms");
    EXPECT_EQ(Row(tb, "ProfilerStep*")["Self CUDA"], "0.000us");
    // ProfilerStep*: 3 steps of 3 ms = 9 ms; self 3 x (3 - 1.1 - 1.5) = 1.2 ms; GPU 6.6 ms.
    TableRow r = Row(tb, "ProfilerStep*");
    EXPECT_EQ(r["# of Calls"], "3");
    EXPECT_EQ(r["CPU total"], "9.000ms");
    EXPECT_EQ(r["Self CPU"], "1.200ms");
    EXPECT_EQ(r["CUDA total"], "6.600ms");
    // backward: 3 x (1.5 ms - 10 us) = 4.470 ms; forward: 3 x (1.1 ms - 10 us) = 3.270 ms.
    EXPECT_EQ(Row(tb, "backward")["Self CPU"], "4.470ms");
    EXPECT_EQ(Row(tb, "backward")["CUDA total"], "4.200ms");
    EXPECT_EQ(Row(tb, "forward")["Self CPU"], "3.270ms");
    EXPECT_EQ(Row(tb, "forward")["CPU total"], "3.300ms");
    r = Row(tb, "cudaLaunchKernel");
    EXPECT_EQ(r["# of Calls"], "6");
    EXPECT_EQ(r["Self CPU"], "60.000us");
    EXPECT_EQ(r["CUDA time avg"], "1.100ms");
    EXPECT_EQ(Row(tb, "bwd(float*)")["Self CUDA"], "4.200ms");
    EXPECT_EQ(Row(tb, "bwd(float*)")["# of Calls"], "3");
    EXPECT_EQ(Row(tb, "fwd(float*)")["Self CUDA %"], "36.36%");  // 2.4 / 6.6
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 9.000ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Self CUDA time total: 6.600ms")) << tb;
    EXPECT_TRUE(Contains(tb, "Profile window: cycle 1, steps 3..5 (partial")) << tb;
    EXPECT_TRUE(Contains(tb, "1 window starts found gprof's window thread behind")) << tb;
  });
}

// unmatched_open_ranges/input.json (no GPU data; counters: 2 unmatched pops, 1 range open at
//   the end). Thread 4242 'main': request 1..5 ms { decode 2..3 ms (domain 1 'mylib',
//   category 3) { mark 'checkpoint' at 2.5 ms (mylib) } }; request 6..20 ms, open at end;
//   start/end ranges async_io 4..8 ms and prefetch 4.5..7.5 ms. Thread 4243 'io': start/end
//   range async_io 7..9 ms; mark 'io done' at 8.5 ms.
TEST(GoldenExpectations, UnmatchedOpenRanges) {
  ForBothOutputs("unmatched_open_ranges", [](const CaseOutputs& o) {
    const json& t = o.trace;
    // 6 ranges and 2 marks; no GPU process, no devices.
    EXPECT_EQ(CountByPhaseAndCategory(t),
              (std::map<std::string, int>{{"X user_annotation", 6}, {"i user_annotation", 2}}));
    EXPECT_TRUE(t["deviceProperties"].empty());
    EXPECT_EQ(ProcessName(t, 0), "");
    EXPECT_EQ(t["gprof"]["counters"]["nvtx_unmatched_pops"], 2);
    EXPECT_EQ(t["gprof"]["counters"]["nvtx_ranges_open_at_end"], 1);

    const json req1 = ExpectSlice(t, "user_annotation", "request", 1000, 4000, kPid, 4242);
    const json decode = ExpectSlice(t, "user_annotation", "decode", 2000, 1000, kPid, 4242);
    ExpectInside(decode, req1);
    ASSERT_TRUE(decode.is_object());
    EXPECT_EQ(decode["args"]["domain"], "mylib");
    EXPECT_EQ(decode["args"]["category"], 3);
    // The open request runs to the profile's end: 6..20 ms -> 6000 / 14000, marked as such.
    const json req2 = ExpectSlice(t, "user_annotation", "request", 6000, 14000, kPid, 4242);
    ASSERT_TRUE(req2.is_object());
    EXPECT_EQ(req2["args"]["open at end"], true);
    // Start/end ranges may cross push/pop ranges, so each thread's go to a track of their own
    // (synthetic tids), where prefetch 4.5..7.5 ms nests inside async_io 4..8 ms.
    const std::vector<json> io = Events(t, "X", "user_annotation", "async_io");
    ASSERT_EQ(io.size(), 2u);
    const json io_main = Slice(t, "user_annotation", "async_io", 4000);
    const json io_io = Slice(t, "user_annotation", "async_io", 7000);
    const json prefetch = Slice(t, "user_annotation", "prefetch", 4500);
    ASSERT_TRUE(io_main.is_object() && io_io.is_object() && prefetch.is_object());
    EXPECT_DOUBLE_EQ(io_main["dur"].get<double>(), 4000.0);
    EXPECT_DOUBLE_EQ(io_io["dur"].get<double>(), 2000.0);
    EXPECT_DOUBLE_EQ(prefetch["dur"].get<double>(), 3000.0);
    EXPECT_EQ(ThreadName(t, kPid, io_main["tid"].get<uint64_t>()), "main (NVTX start/end ranges)");
    EXPECT_EQ(ThreadName(t, kPid, io_io["tid"].get<uint64_t>()), "io (NVTX start/end ranges)");
    ExpectInside(prefetch, io_main);
    for (const json* e : {&io_main, &io_io, &prefetch}) {
      EXPECT_EQ((*e)["args"]["start/end range"], true) << *e;
    }
    // Marks: instant events on their thread.
    const std::vector<json> cp = Events(t, "i", "user_annotation", "checkpoint");
    ASSERT_EQ(cp.size(), 1u);
    EXPECT_EQ(cp[0]["tid"], 4242);
    EXPECT_DOUBLE_EQ(cp[0]["ts"].get<double>(), 2500.0);
    EXPECT_EQ(cp[0]["args"]["domain"], "mylib");
    const std::vector<json> done = Events(t, "i", "user_annotation", "io done");
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0]["tid"], 4243);
    EXPECT_DOUBLE_EQ(done[0]["ts"].get<double>(), 8500.0);

    // Table (no GPU columns) by Self CPU: request (4 - 1) + 14 = 17 ms; decode 1 ms; the
    // start/end ranges have no Self CPU (name order: async_io, prefetch).
    const std::string& tb = o.table;
    EXPECT_EQ(RowNames(tb),
              (std::vector<std::string>{"request", "decode", "async_io", "prefetch"}));
    TableRow r = Row(tb, "request");
    EXPECT_EQ(r["# of Calls"], "2");
    EXPECT_EQ(r["Self CPU"], "17.000ms");
    EXPECT_EQ(r["CPU total"], "18.000ms");
    EXPECT_EQ(r["CPU time avg"], "9.000ms");
    EXPECT_EQ(Row(tb, "decode")["Self CPU"], "1.000ms");
    // async_io: 4 + 2 = 6 ms over 2 calls; 6 / 18 = 33.33%.
    r = Row(tb, "async_io");
    EXPECT_EQ(r["# of Calls"], "2");
    EXPECT_EQ(r["Self CPU"], "0.000us");
    EXPECT_EQ(r["CPU total"], "6.000ms");
    EXPECT_EQ(r["CPU total %"], "33.33%");
    EXPECT_EQ(Row(tb, "prefetch")["CPU total"], "3.000ms");
    EXPECT_EQ(r.count("Self CUDA"), 0u);
    EXPECT_TRUE(Contains(tb, "Self CPU time total: 18.000ms")) << tb;
    EXPECT_TRUE(Contains(tb, "2 NVTX pops/ends with no open range")) << tb;
    EXPECT_TRUE(Contains(tb, "1 NVTX ranges still open at the end")) << tb;
  });
}

// Every case in tests/golden has a test above: a new case needs its own hand-derived checks.
TEST(GoldenExpectations, EveryCaseHasHandDerivedChecks) {
  const std::set<std::string> covered = {"compute_bound",         "escaping_names",
                                         "memcpy_memset_kinds",   "nested_two_threads",
                                         "overhead_bound",        "schedule_window_steps",
                                         "unmatched_open_ranges"};
  std::set<std::string> cases;
  for (const auto& entry : std::filesystem::directory_iterator(GoldenDir())) {
    if (std::filesystem::exists(entry.path() / "input.json")) {
      cases.insert(entry.path().filename().string());
    }
  }
  EXPECT_EQ(cases, covered) << "add a GoldenExpectations test for each new case";
}

}  // namespace
}  // namespace gprof::golden
