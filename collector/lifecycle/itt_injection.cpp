// The ITT entry points' side of the lifecycle (runtime.h, collector/host/itt_hooks.h): the one
// init at the first string handle, then the per-op hot path straight into the host hooks.
#include <atomic>

#include "collector/host/host_collection.h"
#include "collector/host/itt_hooks.h"
#include "collector/host/nvtx_hooks.h"
#include "collector/lifecycle/runtime.h"
#include "collector/lifecycle/runtime_state.h"
#include "support/log.h"

namespace gprof::collector {
namespace {

// 0: not tried, 1: init done and NVTX collection on, 2: off (init failed or GPROF_NVTX=0).
std::atomic<int> g_itt_state{0};

}  // namespace

void OnIttApiInit(void* itt_global, const IttFunction* ours, size_t count) noexcept {
  constexpr size_t kMax = 8;
  const char* names[kMax];
  void* functions[kMax];
  size_t n = 0;
  for (size_t i = 0; i < count && n < kMax; ++i, ++n) {
    names[n] = ours[i].name;
    functions[n] = ours[i].function;
  }
  FillIttApi(itt_global, names, functions, n);  // a global without ITT's magic is left alone
}

const void* OnIttStringHandle(const char* name) noexcept {
  int state = g_itt_state.load(std::memory_order_acquire);
  if (state == 0) {
    state = lifecycle::EnsureInit() && lifecycle::g_rt->config.nvtx ? 1 : 2;
    g_itt_state.store(state, std::memory_order_release);
  }
  if (state != 1) return nullptr;  // torch's task_begin gets nullptr and records nothing
  return IttStringHandle(name);
}

// Tasks of other libraries' ITT domains are skipped at both ends, so pushes and pops still pair.
void OnIttTaskBegin(const void* domain, const void* handle) noexcept {
  if (!HostCollectionEnabled() || !IttIsTorchDomain(domain)) return;
  PushTorchOp(IttEntryOf(handle));
}

void OnIttTaskEnd(const void* domain) noexcept {
  if (IttIsTorchDomain(domain)) PopTorchOp();
}

}  // namespace gprof::collector
