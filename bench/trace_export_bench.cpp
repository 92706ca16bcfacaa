// Figure 4: trace export of a profile with N kernel launches (default 1 M). Measures the whole
// WriteTraceJson core (planning: lane packing, correlation, sort; then formatting) into memory
// (a sink that keeps each 1 MiB chunk in the writer's buffer and counts bytes: no disk I/O), the
// same for the Perfetto protobuf writer (4d, 4e: same plan, interned names), and for reference the
// streaming JSON file writer (4f). Prints MB/s, events/s and bytes per launch.
// 4a-4f are the best case (bench_profile.h: one kernel name of 47 characters, one launch
// configuration, one thread, one stream; every per-value cache of the writers hits). The
// "-mixed" figures export the realistic workload of bench/workload.h instead (300 mangled names
// that demangle to 114-672 characters, 50 configurations, 4 threads, 8 streams; kernels, memcpys,
// memsets and calls without GPU work); "per launch" there is per API call.
// With --peer BIN (another build's trace_export_bench, e.g. the commit before a writer change,
// built in a scratch directory), BIN runs in the same run on the same launch count and 4c / 4c-mixed
// print its bytes per launch beside this build's, with the ratio.
//   trace_export_bench [launches] [--file DIR] [--peer BIN]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "analysis/attribution/names.h"
#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/trace/trace_json.h"

using namespace gprof;

namespace {

struct Counting {
  uint64_t bytes = 0;
  uint64_t checksum = 0;  // touches the bytes so nothing is optimized away
};

void CountSink(void* ctx, const char* data, size_t size) {
  auto* c = static_cast<Counting*>(ctx);
  c->bytes += size;
  c->checksum += static_cast<unsigned char>(data[size / 2]);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// The 4c / 4c-mixed bytes per launch that `peer` (another build of this program) prints for
// `launches`, by figure id; empty when it cannot be run.
std::map<std::string, double> PeerBytesPerLaunch(const std::string& peer, uint64_t launches) {
  std::map<std::string, double> out;
  const std::string cmd = "'" + peer + "' " + std::to_string(launches);
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char line[1024];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    // FIGURE|<id>|<what>|<measured>|<target>|<verdict>, measured "712 B" or "712.5 B ..."
    std::string l(line);
    if (l.rfind("FIGURE|4c", 0) != 0) continue;
    const size_t id_end = l.find('|', 7);
    const size_t what_end = l.find('|', id_end + 1);
    if (id_end == std::string::npos || what_end == std::string::npos) continue;
    out[l.substr(7, id_end - 7)] = std::strtod(l.c_str() + what_end + 1, nullptr);
  }
  pclose(f);
  return out;
}

// Best of 3 runs (the machine is shared) of `format` into a counting sink: thread CPU seconds.
template <typename F>
double BestOf3(F format, TraceStats* stats, Counting* c) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    *c = Counting{};
    const double t0 = bench::NowSeconds();
    *stats = format(JsonSink{c, &CountSink});
    best = std::min(best, bench::NowSeconds() - t0);
  }
  return best;
}

// Figures 4a-4f (ids + `suffix`) for `p`; `calls` API calls, `shape` says what they are.
uint64_t ExportFigures(const Profile& p, const std::string& suffix, const std::string& shape,
                       const std::string& file_dir, const std::map<std::string, double>& peer) {
  const double calls = static_cast<double>(p.api_calls.size());
  TraceStats stats;
  Counting c;
  const double best = BestOf3(
      [&p](JsonSink sink) { return FormatTraceJson(p, "bench.pt.trace.json", sink); }, &stats, &c);
  const double mb = static_cast<double>(stats.bytes) / 1e6;
  const double gbps = mb / 1e3 / best;
  const double per_launch = static_cast<double>(stats.bytes) / calls;
  std::printf("trace export%s: %zu API calls, %zu kernels, %zu memcpys, %zu memsets, %llu events, "
              "%.1f MB in %.3f s (memory sink)\n",
              suffix.c_str(), p.api_calls.size(), p.kernels.size(), p.memcpys.size(),
              p.memsets.size(), static_cast<unsigned long long>(stats.events), mb, best);
  bench::PrintFigure("4a" + suffix, "trace export into memory (GB/s, incl. planning; " + shape + ")",
                     Fmt("%.2f GB/s", gbps), ">= 1 GB/s", gbps >= 1.0 ? "PASS" : "FAIL");
  bench::PrintFigure("4b" + suffix, "trace export events/s",
                     Fmt("%.1f M events/s", static_cast<double>(stats.events) / best / 1e6), "-",
                     "INFO");
  std::string bytes = Fmt("%.1f B", per_launch);
  if (auto it = peer.find("4c" + suffix); it != peer.end() && it->second > 0) {
    bytes += Fmt("; peer %.1f B", it->second) + Fmt(", ratio %.3f", per_launch / it->second);
  }
  bench::PrintFigure("4c" + suffix,
                     "trace bytes per launch (API call + its GPU record + flow, when it has one)",
                     bytes, "<= 600 B", per_launch <= 600 ? "PASS" : "FAIL");
  // 4d/4e: the Perfetto protobuf form of the same trace (planning included, as in 4a).
  TraceStats pb_stats;
  Counting pb;
  const double pb_best =
      BestOf3([&p](JsonSink sink) { return FormatPerfettoTrace(p, sink); }, &pb_stats, &pb);
  const double pb_per_launch = static_cast<double>(pb_stats.bytes) / calls;
  std::printf("perfetto export%s: %llu packets, %.1f MB in %.3f s (memory sink)\n", suffix.c_str(),
              static_cast<unsigned long long>(pb_stats.events),
              static_cast<double>(pb_stats.bytes) / 1e6, pb_best);
  bench::PrintFigure("4d" + suffix, "Perfetto protobuf trace bytes per launch (same content as 4c" +
                                        suffix + ")",
                     Fmt("%.0f B", pb_per_launch), "<= 600 B", pb_per_launch <= 600 ? "PASS" : "FAIL");
  bench::PrintFigure("4e" + suffix,
                     "Perfetto protobuf export into memory (MB/s of output, incl. planning)",
                     Fmt("%.0f MB/s", static_cast<double>(pb_stats.bytes) / 1e6 / pb_best) +
                         Fmt(", %.2f s per 1 M launches", pb_best * 1e6 / calls),
                     "-", "INFO");
  if (!file_dir.empty()) {
    const std::string path = file_dir + "/bench.pt.trace.json";
    const double t0 = bench::NowSeconds();
    const TraceStats fs = WriteTraceJson(p, path);
    const double dt = bench::NowSeconds() - t0;
    bench::PrintFigure("4f" + suffix, "trace export to file (GB/s, incl. write(); CPU time)",
                       Fmt("%.2f GB/s", static_cast<double>(fs.bytes) / 1e9 / dt), "-", "INFO");
    std::remove(path.c_str());
  }
  return c.checksum + pb.checksum;
}

}  // namespace

int main(int argc, char** argv) {
  bench::LaunchProfileOptions opt;
  std::string file_dir, peer_bin;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
      file_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--peer") == 0 && i + 1 < argc) {
      peer_bin = argv[++i];
    } else {
      opt.launches = std::strtoull(argv[i], nullptr, 10);
    }
  }
  // The peer runs first, alone, so that the two builds never share the machine's cores.
  std::map<std::string, double> peer;
  if (!peer_bin.empty()) {
    peer = PeerBytesPerLaunch(peer_bin, opt.launches);
    if (peer.empty()) {
      std::fprintf(stderr, "peer %s printed no 4c figure\n", peer_bin.c_str());
      return 1;
    }
    std::printf("peer %s: 4c %.1f B, 4c-mixed %.1f B per launch\n", peer_bin.c_str(), peer["4c"],
                peer["4c-mixed"]);
  }
  uint64_t checksum = 0;
  {
    const Profile p = bench::MakeLaunchProfile(opt);
    checksum += ExportFigures(p, "", "best case: 1 name of " +
                                         std::to_string(opt.kernel_name.size()) +
                                         " chars, 1 config, 1 thread, 1 stream",
                              file_dir, peer);
  }
  {
    // The realistic workload: the names must demangle as CUPTI's would (the trace shows the
    // demangled names); cuBLAS's extern "C" names stay as they are.
    size_t demangled = 0;
    double demangled_chars = 0;
    for (const std::string& n : bench::MixedKernelNames()) {
      const std::string d = DemangleKernelName(n);
      demangled_chars += static_cast<double>(d.size());
      if (d != n) ++demangled;
      else if (n.rfind("_Z", 0) == 0) {
        std::fprintf(stderr, "workload kernel name does not demangle: %s\n", n.c_str());
        return 1;
      }
    }
    const Profile p = bench::MakeMixedProfile(opt.launches);
    char shape[200];
    std::snprintf(shape, sizeof(shape),
                  "realistic: %u names (%zu demangle, avg %.0f chars demangled), %u configs, "
                  "%u threads, %u streams",
                  bench::kMixedKernelNames, demangled,
                  demangled_chars / static_cast<double>(bench::MixedKernelNames().size()),
                  bench::kMixedLaunchConfigs, bench::kMixedThreads, bench::kMixedStreams);
    checksum += ExportFigures(p, "-mixed", shape, file_dir, peer);
  }
  return checksum == 0xffffffffffffffffull ? 1 : 0;
}
