// Test-only observation, no CUPTI behaviour: CUDASIM_CALLBACK_REPORT=1 makes the stand-in count
// the API callbacks it delivers to the subscriber, per (domain, cbid), and print them to stderr
// when the library is unloaded ("CUDASIM_CALLBACKS domain=D cbid=N count=M", one line per id that
// fired, then "CUDASIM_CALLBACKS total=T"). A tool's cost per CUDA call is mostly the callbacks it
// asked for (cuptiEnableDomain turns on every id of a domain, cuptiEnableCallback one,
// cupti_callbacks.h): tests check which ids a tool enabled by what it was called for.
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "tests/cudasim/cupti/cupti_state.h"

namespace gprof::cudasim {
namespace {

std::atomic<uint64_t> g_counts[kMaxDomain][kMaxCbid];  // zero-initialized (static storage)

bool Wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("CUDASIM_CALLBACK_REPORT");
    return v != nullptr && v[0] == '1';
  }();
  return wanted;
}

__attribute__((destructor)) void PrintCallbackReport() {
  if (!Wanted()) return;
  uint64_t total = 0;
  for (int d = 0; d < kMaxDomain; ++d) {
    for (int id = 0; id < kMaxCbid; ++id) {
      const uint64_t n = g_counts[d][id].load(std::memory_order_relaxed);
      if (n == 0) continue;
      total += n;
      std::fprintf(stderr, "CUDASIM_CALLBACKS domain=%d cbid=%d count=%llu\n", d, id,
                   static_cast<unsigned long long>(n));
    }
  }
  std::fprintf(stderr, "CUDASIM_CALLBACKS total=%llu\n", static_cast<unsigned long long>(total));
}

}  // namespace

void CountCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain <= 0 || domain >= kMaxDomain || cbid >= static_cast<CUpti_CallbackId>(kMaxCbid)) {
    return;
  }
  if (Wanted()) g_counts[domain][cbid].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace gprof::cudasim
