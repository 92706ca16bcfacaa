// Figure 4: trace export of a profile with N kernel launches (default 1 M). Measures the whole
// WriteTraceJson core (planning: lane packing, correlation, sort; then formatting) into memory
// (a sink that keeps each 1 MiB chunk in the writer's buffer and counts bytes: no disk I/O), the
// same for the Perfetto protobuf writer (4d, 4e: same plan, interned names), and for reference the
// streaming JSON file writer (4f). Prints MB/s, events/s and bytes per launch.
//   trace_export_bench [launches] [--file DIR]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/bench_profile.h"
#include "exporters/exporters.h"
#include "exporters/perfetto_trace.h"
#include "exporters/trace_json.h"

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

}  // namespace

int main(int argc, char** argv) {
  bench::LaunchProfileOptions opt;
  std::string file_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
      file_dir = argv[++i];
    } else {
      opt.launches = std::strtoull(argv[i], nullptr, 10);
    }
  }
  const Profile p = bench::MakeLaunchProfile(opt);
  // Best of 3 runs: the machine is shared.
  double best = 1e30;
  TraceStats stats;
  Counting c;
  for (int rep = 0; rep < 3; ++rep) {
    c = Counting{};
    const double t0 = bench::NowSeconds();
    stats = FormatTraceJson(p, "bench.pt.trace.json", JsonSink{&c, &CountSink});
    best = std::min(best, bench::NowSeconds() - t0);
  }
  const double mb = static_cast<double>(stats.bytes) / 1e6;
  const double gbps = mb / 1e3 / best;
  const double per_launch = static_cast<double>(stats.bytes) / static_cast<double>(opt.launches);
  std::printf("trace export: %llu launches, %llu events, %.1f MB in %.3f s (memory sink)\n",
              static_cast<unsigned long long>(opt.launches),
              static_cast<unsigned long long>(stats.events), mb, best);
  bench::PrintFigure("4a", "trace export into memory (GB/s, incl. planning)", Fmt("%.2f GB/s", gbps),
                     ">= 1 GB/s", gbps >= 1.0 ? "PASS" : "FAIL");
  bench::PrintFigure("4b", "trace export events/s", Fmt("%.1f M events/s", stats.events / best / 1e6),
                     "-", "INFO");
  bench::PrintFigure("4c", "trace bytes per launch (kernel+API+flow; " +
                               std::to_string(opt.kernel_name.size()) + "-char kernel name)",
                     Fmt("%.0f B", per_launch), "<= 600 B", per_launch <= 600 ? "PASS" : "FAIL");
  // 4d/4e: the Perfetto protobuf form of the same trace (planning included, as in 4a).
  double pb_best = 1e30;
  TraceStats pb_stats;
  Counting pb;
  for (int rep = 0; rep < 3; ++rep) {
    pb = Counting{};
    const double t0 = bench::NowSeconds();
    pb_stats = FormatPerfettoTrace(p, JsonSink{&pb, &CountSink});
    pb_best = std::min(pb_best, bench::NowSeconds() - t0);
  }
  const double pb_per_launch =
      static_cast<double>(pb_stats.bytes) / static_cast<double>(opt.launches);
  std::printf("perfetto export: %llu packets, %.1f MB in %.3f s (memory sink)\n",
              static_cast<unsigned long long>(pb_stats.events),
              static_cast<double>(pb_stats.bytes) / 1e6, pb_best);
  bench::PrintFigure("4d", "Perfetto protobuf trace bytes per launch (same content as 4c)",
                     Fmt("%.0f B", pb_per_launch), "<= 600 B", pb_per_launch <= 600 ? "PASS" : "FAIL");
  bench::PrintFigure("4e", "Perfetto protobuf export into memory (MB/s of output, incl. planning)",
                     Fmt("%.0f MB/s", static_cast<double>(pb_stats.bytes) / 1e6 / pb_best) +
                         Fmt(", %.2f s per 1 M launches",
                             pb_best * 1e6 / static_cast<double>(opt.launches)),
                     "-", "INFO");
  if (!file_dir.empty()) {
    const std::string path = file_dir + "/bench.pt.trace.json";
    const double t0 = bench::NowSeconds();
    const TraceStats fs = WriteTraceJson(p, path);
    const double dt = bench::NowSeconds() - t0;
    bench::PrintFigure("4f", "trace export to file (GB/s, incl. write())",
                       Fmt("%.2f GB/s", static_cast<double>(fs.bytes) / 1e9 / dt), "-", "INFO");
    std::remove(path.c_str());
  }
  return c.checksum + pb.checksum == 0xffffffffffffffffull ? 1 : 0;
}
