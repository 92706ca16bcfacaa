// Figure 8d's floor: a RecordFunction observer that records nothing, built against the installed
// torch's headers by bench/run-all (g++, ~3 s). Turned on for the calling thread by
// gprof_bench_noop_observer_on(); its two callbacks only count. What it adds per op is what any
// per-op observer of torch's RecordFunction costs before it records anything: gprof-run's ITT and
// NVTX paths, and torch.profiler itself, all pay it.
#include <ATen/record_function.h>

namespace {

thread_local long t_calls = 0;

std::unique_ptr<at::ObserverContext> Enter(const at::RecordFunction& fn) {
  ++t_calls;
  (void)fn.name();
  return nullptr;
}

void Exit(const at::RecordFunction&, at::ObserverContext*) { ++t_calls; }

}  // namespace

extern "C" void gprof_bench_noop_observer_on() {
  at::addThreadLocalCallback(
      at::RecordFunctionCallback(&Enter, &Exit).needsInputs(false).needsIds(false));
}

extern "C" long gprof_bench_noop_observer_calls() { return t_calls; }
