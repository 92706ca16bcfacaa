// Figure 1 workload: nvtxRangePushA + nvtxRangePop pairs through the toolkit's header-only NVTX3,
// exactly as an annotated program calls them. bench/run-all runs this program twice in the same
// run: with NVTX_INJECTION64_PATH=libgprof_inject.so (the real hooks) and without it (NVTX then
// no-ops), and reports the difference per pair. Prints "NVTX_NS_PER_PAIR <best of rounds>".
//   nvtx_loop [pairs per round] [rounds]
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

double Now() {
  timespec ts{};
  // Thread CPU time: the machine is shared, wall time would count waiting for a core.
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  // The first NVTX call loads and initializes the tool: keep it out of the timing.
  nvtxRangePushA("warmup");
  nvtxRangePop();
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = Now();
    for (long i = 0; i < pairs; ++i) {
      nvtxRangePushA("forward");
      nvtxRangePop();
    }
    const double dt = Now() - t0;
    if (dt < best) best = dt;
  }
  std::printf("NVTX_NS_PER_PAIR %.2f\n", best * 1e9 / static_cast<double>(pairs));
  return 0;
}
