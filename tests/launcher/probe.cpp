// gprof_launch_probe: the program the launcher tests run under gprof-run. It does one thing per
// invocation and reports it with a token on stdout, so a test can check what happened inside the
// profiled process. Test-only.
//   probe exit N            exit with status N
//   probe signal N          die of signal N
//   probe touch PATH        create PATH (marker: "the program ran"), exit 0
//   probe wait-signal CODE  print "ready", wait for SIGINT/SIGTERM/SIGHUP; on one print
//                           "probe: got signal N" and exit CODE (99 after 30 s without one)
//   probe env VAR...        print VAR=value (or "VAR unset") for each
//   probe pid               print "pid=N"
//   probe dump [LOSSES]     write a sample dump into $GPROF_OUTPUT_DIR as the injection library
//                           would (<program>.<pid>.gpdump); LOSSES sets cupti_dropped_records
//   probe corrupt-dump      write a corrupt <program>.<pid>.gpdump into $GPROF_OUTPUT_DIR
//   probe ranks N [SLOW]    write the whole-run dumps N ranks of a distributed run would: rank r
//                           as pid <pid> + r (rank 0 is this process), starting r ms after the
//                           sample profile's start (sample_profile.h); with SLOW, every rank
//                           gets three steps (AddSampleSteps), rank SLOW's longer
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "model/dump.h"
#include "tests/launcher/sample_profile.h"

namespace {

volatile sig_atomic_t g_signal = 0;
void OnSignal(int sig) { g_signal = sig; }

std::string DumpPath(long pid = ::getpid()) {
  const char* dir = std::getenv("GPROF_OUTPUT_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/probe." + std::to_string(pid) +
         gprof::kDumpExtension;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const std::string mode = argv[1];
  if (mode == "exit" && argc == 3) return std::atoi(argv[2]);
  if (mode == "signal" && argc == 3) {
    const int sig = std::atoi(argv[2]);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return 98;
  }
  if (mode == "touch" && argc == 3) {
    std::ofstream(argv[2]) << "ran\n";
    return 0;
  }
  if (mode == "wait-signal" && argc == 3) {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int i = 0; i < 3000 && g_signal == 0; ++i) ::usleep(10'000);
    if (g_signal == 0) return 99;
    std::printf("probe: got signal %d\n", static_cast<int>(g_signal));
    return std::atoi(argv[2]);
  }
  if (mode == "env") {
    for (int i = 2; i < argc; ++i) {
      const char* v = std::getenv(argv[i]);
      if (v != nullptr) std::printf("%s=%s\n", argv[i], v);
      else std::printf("%s unset\n", argv[i]);
    }
    return 0;
  }
  if (mode == "pid") {
    std::printf("pid=%d\n", static_cast<int>(::getpid()));
    return 0;
  }
  if (mode == "dump") {
    gprof::Profile p = gprof::testing::SampleProfile(static_cast<uint32_t>(::getpid()), "probe");
    if (argc == 3) p.counters.cupti_dropped_records = std::strtoull(argv[2], nullptr, 10);
    const std::string error = gprof::WriteDump(p, DumpPath());
    if (!error.empty()) {
      std::fprintf(stderr, "probe: %s\n", error.c_str());
      return 65;
    }
    return 0;
  }
  if (mode == "ranks" && (argc == 3 || argc == 4)) {
    const int n = std::atoi(argv[2]);
    const int slow = argc == 4 ? std::atoi(argv[3]) : -1;
    for (int r = 0; r < n; ++r) {
      const uint32_t pid = static_cast<uint32_t>(::getpid() + r);
      gprof::Profile p = gprof::testing::RankedSampleProfile(pid, "probe", r, n);
      if (slow >= 0) gprof::testing::AddSampleSteps(&p, r == slow);
      const std::string error = gprof::WriteDump(p, DumpPath(pid));
      if (!error.empty()) {
        std::fprintf(stderr, "probe: %s\n", error.c_str());
        return 65;
      }
    }
    return 0;
  }
  if (mode == "corrupt-dump") {
    std::ofstream(DumpPath()) << "GPROFDMP this is not a dump";
    return 0;
  }
  return 64;
}
