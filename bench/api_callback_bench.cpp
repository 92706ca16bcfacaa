// Figure 2: gprof's cost per CUDA API call (enter + exit) in its CUPTI API callback. The real
// collector is started against bench_cupti_shim (a do-nothing libcupti that returns the callback
// gprof subscribed), then the callback is called the way CUPTI calls it on a launch:
// CUpti_CallbackData with functionName, symbolName, correlationId/Data and the return value,
// ENTER then EXIT, runtime domain, cbid __cudaLaunchKernel. Baseline: the same loop calling an
// empty callback through the same pointer type. Reports the median over rounds of
// (gprof - baseline) per pair, and, as information, the cost with the nested driver call
// (cuLaunchKernel enter/exit inside the runtime call, which gprof skips).
//   api_callback_bench [pairs per round] [rounds]
#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_profile.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/host/thread_buffer.h"
#include "config/config.h"
#include "support/clock.h"

using namespace gprof;

namespace {

void CUPTIAPI EmptyCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) noexcept {}

// A minimal tool for scale: reads the clock on enter and exit and keeps the last value.
volatile uint64_t g_sink = 0;
void CUPTIAPI ClockCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) noexcept {
  g_sink = NowNs();
}

struct LaunchParams {  // what __cudaLaunchKernel's functionParams points to (see cudasim README)
  void* kernel;
  unsigned grid[3];
  unsigned block[3];
  void** args;
  size_t shared_mem;
  void* stream;
};

// Calls `cb` like CUPTI does for `pairs` launches; returns seconds.
double Run(CUpti_CallbackFunc cb, void* userdata, long pairs, uint32_t first_corr, bool nested,
           CUpti_CallbackId cbid = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) {
  LaunchParams params{};
  int rc = 0;
  uint64_t corr_data = 0;
  uint64_t driver_corr_data = 0;
  CUpti_CallbackData rt{};
  rt.functionName = "__cudaLaunchKernel";
  rt.symbolName = "_Z11tiny_kernelPi";
  rt.functionParams = &params;
  rt.functionReturnValue = &rc;
  rt.correlationData = &corr_data;
  CUpti_CallbackData drv = rt;
  drv.functionName = "cuLaunchKernel";
  drv.correlationData = &driver_corr_data;
  const double t0 = bench::NowSeconds();
  for (long i = 0; i < pairs; ++i) {
    rt.correlationId = first_corr + static_cast<uint32_t>(i) * 2;
    rt.callbackSite = CUPTI_API_ENTER;
    cb(userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &rt);
    if (nested) {
      drv.correlationId = rt.correlationId + 1;
      drv.callbackSite = CUPTI_API_ENTER;
      cb(userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &drv);
      drv.callbackSite = CUPTI_API_EXIT;
      cb(userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &drv);
    }
    rt.callbackSite = CUPTI_API_EXIT;
    cb(userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &rt);
  }
  return bench::NowSeconds() - t0;
}

// Run() from `depth` extra frames down (noinline recursion), for the stack walk's per-frame cost.
__attribute__((noinline)) double Deep(int depth, CUpti_CallbackFunc cb, void* userdata, long pairs,
                                      uint32_t first_corr, CUpti_CallbackId cbid) {
  if (depth == 0) return Run(cb, userdata, pairs, first_corr, false, cbid);
  const double t = Deep(depth - 1, cb, userdata, pairs, first_corr, cbid);
  g_sink = g_sink + 1;  // not a tail call: keeps each frame
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  const ParseResult parsed = ParseConfig({{"GPROF_CUPTI_LIB", GPROF_BENCH_CUPTI_SHIM},
                                          {"GPROF_HOST_BUFFER_MIB", "1024"}});
  if (!parsed.errors.empty()) {
    std::fprintf(stderr, "config: %s\n", FormatError(parsed.errors.front()).c_str());
    return 1;
  }
  if (!collector::InitThreadBuffers(uint64_t{parsed.config.host_buffer_mib} << 20)) return 1;
  const collector::GpuStartResult started = collector::StartGpuCollection(parsed.config);
  if (!started.collecting) {
    std::fprintf(stderr, "collector did not start: %s\n", started.status.c_str());
    return 1;
  }
  void* shim = dlopen(GPROF_BENCH_CUPTI_SHIM, RTLD_NOW | RTLD_NOLOAD);
  auto get = shim ? reinterpret_cast<CUpti_CallbackFunc (*)(void**)>(dlsym(shim, "BenchSubscribedCallback"))
                  : nullptr;
  void* userdata = nullptr;
  CUpti_CallbackFunc gprof_cb = get ? get(&userdata) : nullptr;
  if (gprof_cb == nullptr) {
    std::fprintf(stderr, "no subscribed callback from the shim\n");
    return 1;
  }
  const CUpti_CallbackFunc empty = reinterpret_cast<CUpti_CallbackFunc>(&EmptyCallback);
  std::vector<double> plain, with_driver, clock_only;
  uint32_t corr = 1;
  for (int r = 0; r < rounds; ++r) {
    for (bool nested : {false, true}) {
      const double base = Run(empty, nullptr, pairs, corr, nested);
      const double ours = Run(gprof_cb, userdata, pairs, corr, nested);
      corr += static_cast<uint32_t>(pairs) * 2;
      (nested ? with_driver : plain).push_back((ours - base) * 1e9 / static_cast<double>(pairs));
      collector::ResetHostRecords();  // keep the arena from filling (drops would be cheaper)
    }
    const double base = Run(empty, nullptr, pairs, corr, false);
    const double clocks = Run(reinterpret_cast<CUpti_CallbackFunc>(&ClockCallback), nullptr, pairs,
                              corr, false);
    clock_only.push_back((clocks - base) * 1e9 / static_cast<double>(pairs));
  }
  // Figure 13: stack captured (cudaDeviceSynchronize, selected) vs recorded but not selected
  // (the launch), same loop, at the bench's depth and 24 frames deeper.
  constexpr CUpti_CallbackId kSync = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
  constexpr CUpti_CallbackId kLaunch = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
  const long stack_pairs = std::max<long>(pairs / 10, 1000);
  std::vector<double> stack_shallow, stack_deep, unselected_deep;
  for (int r = 0; r < rounds; ++r) {
    for (int depth : {0, 24}) {
      const double without = Deep(depth, gprof_cb, userdata, stack_pairs, corr, kLaunch);
      corr += static_cast<uint32_t>(stack_pairs) * 2;
      collector::ResetHostRecords();
      const double with = Deep(depth, gprof_cb, userdata, stack_pairs, corr, kSync);
      corr += static_cast<uint32_t>(stack_pairs) * 2;
      collector::ResetHostRecords();
      const double per = (with - without) * 1e9 / static_cast<double>(stack_pairs);
      (depth == 0 ? stack_shallow : stack_deep).push_back(per);
      if (depth == 24) {
        unselected_deep.push_back(without * 1e9 / static_cast<double>(stack_pairs));
      }
    }
  }
  const uint64_t dropped = collector::HostRecordsDropped();
  const double med = Median(plain);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f ns", med);
  bench::PrintFigure("2", "CUDA API callback, enter+exit (median, runtime launch)", buf,
                     "<= 50 ns", med <= 50 && dropped == 0 ? "PASS" : "FAIL");
  std::snprintf(buf, sizeof(buf), "%.1f ns", Median(with_driver));
  bench::PrintFigure("2b", "same, with the nested cuLaunchKernel pair", buf, "-", "INFO");
  std::snprintf(buf, sizeof(buf), "%.1f ns", Median(clock_only));
  bench::PrintFigure("2c", "for scale: a callback that only reads the clock (enter+exit)", buf, "-",
                     "INFO");
  std::snprintf(buf, sizeof(buf), "+%.1f ns", Median(stack_shallow));
  bench::PrintFigure("13", "native stack on a selected call (sync), over not selected (~6 frames)",
                     buf, "-", "INFO");
  std::snprintf(buf, sizeof(buf), "+%.1f ns", Median(stack_deep));
  bench::PrintFigure("13b", "same from 24 frames deeper (~30 frames walked)", buf, "-", "INFO");
  std::snprintf(buf, sizeof(buf), "%.1f ns", Median(unselected_deep));
  bench::PrintFigure("13c", "for scale: the not-selected pair (launch), whole callback cost", buf,
                     "-", "INFO");
  if (dropped != 0) std::fprintf(stderr, "warning: %llu host records dropped\n",
                                 static_cast<unsigned long long>(dropped));
  return 0;
}
