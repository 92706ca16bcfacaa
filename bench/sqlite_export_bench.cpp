// Figure 10: the SQLite export (outputs/sqlite/sqlite_export.h, `gprof-run export --type sqlite`) of a
// profile with about 1 M kernels and their runtime calls, through the real code path: the
// database written to a file in DIR (temporary file, one transaction, prepared statements,
// renamed into place), then removed.
//   10a        best case (bench_profile.h): N launches, one runtime call + one kernel each, one
//              kernel name, one configuration, one thread;
//   10a-mixed  the realistic workload of bench/workload.h: calls enough for N kernels (78 % of
//              the calls launch one; the rest copy, set memory or launch nothing), 300 names that
//              demangle to 114-672 characters (each demangled and cut to its short name once),
//              50 configurations, 4 threads, 8 streams;
//   10b        the file's bytes per API call; 10c the best run in wall time (the disk included).
// Rows/s counts every row inserted, all tables (StringIds, the enums, ...; the activity rows are
// nearly all of them). Best of 3, thread CPU time (the machine is shared), as the other figures.
//   sqlite_export_bench [kernels] DIR
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "outputs/sqlite/sqlite_export.h"

using namespace gprof;

namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

void Figures(const Profile& p, const std::string& suffix, const std::string& shape,
             const std::string& dir) {
  const std::string path = dir + "/bench.sqlite";
  SqliteExportStats stats;
  double best_cpu = 1e30, best_wall = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double c0 = bench::NowSeconds(), w0 = bench::WallSeconds();
    stats = WriteSqliteExport(p, path);
    best_cpu = std::min(best_cpu, bench::NowSeconds() - c0);
    best_wall = std::min(best_wall, bench::WallSeconds() - w0);
    std::remove(path.c_str());
  }
  const double rows = static_cast<double>(stats.rows);
  std::printf("sqlite export%s: %zu API calls, %zu kernels, %zu memcpys, %zu memsets -> %llu rows, "
              "%.1f MB in %.3f s CPU (%.3f s wall)\n",
              suffix.c_str(), p.api_calls.size(), p.kernels.size(), p.memcpys.size(),
              p.memsets.size(), static_cast<unsigned long long>(stats.rows),
              static_cast<double>(stats.bytes) / 1e6, best_cpu, best_wall);
  bench::PrintFigure("10a" + suffix, "SQLite export rows/s (file on disk, CPU time; " + shape + ")",
                     Fmt("%.2f M rows/s", rows / best_cpu / 1e6) +
                         Fmt(", %.2f s per 1 M kernels",
                             best_cpu * 1e6 / static_cast<double>(p.kernels.size())),
                     "-", "INFO");
  bench::PrintFigure("10b" + suffix, "SQLite export bytes per API call",
                     Fmt("%.0f B", static_cast<double>(stats.bytes) /
                                       static_cast<double>(p.api_calls.size())),
                     "-", "INFO");
  bench::PrintFigure("10c" + suffix, "SQLite export rows/s in wall time (shared machine)",
                     Fmt("%.2f M rows/s", rows / best_wall / 1e6), "-", "INFO");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s KERNELS DIR\n", argv[0]);
    return 2;
  }
  const uint64_t kernels = std::strtoull(argv[1], nullptr, 10);
  const std::string dir = argv[2];
  {
    bench::LaunchProfileOptions opt;
    opt.launches = kernels;
    Figures(bench::MakeLaunchProfile(opt), "",
            "best case: 1 name, 1 config, 1 thread, 1 stream", dir);
  }
  {
    // 78 % of the mixed calls launch a kernel: enough calls for `kernels` of them.
    const Profile p = bench::MakeMixedProfile(kernels * 100 / 78 + 1);
    char shape[160];
    std::snprintf(shape, sizeof(shape), "realistic: %u names, %u configs, %u threads, %u streams",
                  bench::kMixedKernelNames, bench::kMixedLaunchConfigs, bench::kMixedThreads,
                  bench::kMixedStreams);
    Figures(p, "-mixed", shape, dir);
  }
  return 0;
}
