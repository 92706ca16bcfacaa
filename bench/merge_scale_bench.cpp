// Figure 17: the merge at scale, 1,024 ranks. Writes N rank dumps of about M events each (the
// mixed workload of bench/workload.h, plus a "gloo:all_reduce" range per step on the main thread,
// each rank's clock 1 ms further off than the one before), then merges them in this process as
// `gprof-run merge` does, one profile in memory at a time: the survey (ReadDump +
// SummarizeForMerge), the clock alignment, the rows and the findings, and the merged trace into a
// sink that only counts its bytes (at 1,024 x 100 k events it would be tens of GB, far past the
// ~1 GB at which Perfetto's UI gives up). Prints CPU time per rank for the survey and for the
// trace, and the peak RSS (ru_maxrss); the peer, measured first in the same run: the same merge of
// rank 0 alone.
//   merge_scale_bench DIR [RANKSxEVENTS]     (default 1024x100000)
// DIR receives the dumps; they are removed when done.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/ranks/merge.h"
#include "analysis/ranks/merge_findings.h"
#include "bench/bench_profile.h"
#include "bench/rank_dumps.h"
#include "model/dump.h"
#include "outputs/trace/merged_trace.h"

using namespace gprof;

namespace {

namespace fs = std::filesystem;

double PeakRssMib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

struct MergeCost {
  double survey_s = 0, trace_s = 0, rss_mib = 0;
  uint64_t events = 0, trace_bytes = 0;
  size_t findings = 0, rows = 0;
};

MergeCost Merge(const std::vector<std::string>& paths) {
  MergeCost c;
  const double t0 = bench::NowSeconds();
  std::vector<MergeInput> inputs;
  for (const std::string& path : paths) {
    Profile p;
    std::string error;
    if (!ReadDump(path, &p, &error)) {
      std::fprintf(stderr, "merge_scale_bench: %s\n", error.c_str());
      std::exit(1);
    }
    inputs.push_back(SummarizeForMerge(p, path));
    c.events += inputs.back().events;
  }
  SortMergeInputs(&inputs);
  AlignMergeClocks(&inputs);
  c.rows = MergeRows(inputs).size();
  c.findings = MergedFindings(inputs).size();
  c.survey_s = bench::NowSeconds() - t0;
  const double t1 = bench::NowSeconds();
  uint64_t bytes = 0;
  const auto load = [&](size_t k, Profile* p) {
    std::string error;
    if (!ReadDump(inputs[k].file, p, &error)) std::exit(1);
  };
  WriteMergedTrace(inputs, load, "trace.json",
                   JsonSink{&bytes, [](void* ctx, const char*, size_t n) {
                              *static_cast<uint64_t*>(ctx) += n;
                            }});
  c.trace_bytes = bytes;
  c.trace_s = bench::NowSeconds() - t1;
  c.rss_mib = PeakRssMib();
  return c;
}

std::string Fmt(const char* f, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: merge_scale_bench DIR [RANKSxEVENTS]\n");
    return 2;
  }
  const std::string spec = argc > 2 ? argv[2] : "1024x100000";
  const size_t x = spec.find('x');
  const int ranks = std::atoi(spec.substr(0, x).c_str());
  const uint64_t events = std::strtoull(spec.substr(x + 1).c_str(), nullptr, 10);
  const std::string dir = std::string(argv[1]) + "/merge-scale-" + spec;
  fs::remove_all(dir);
  fs::create_directories(dir);
  Profile base = bench::RankBaseProfile(events);
  std::vector<std::string> paths;
  const double w0 = bench::WallSeconds();
  for (int r = 0; r < ranks; ++r) {
    paths.push_back(dir + "/train." + std::to_string(30000 + r) + ".gpdump");
    bench::WriteRankDump(&base, r, ranks, paths.back());
  }
  const double write_s = bench::WallSeconds() - w0;
  base = Profile{};
  const MergeCost one = Merge({paths[0]});
  const double w1 = bench::WallSeconds();
  const MergeCost all = Merge(paths);
  const double merge_wall = bench::WallSeconds() - w1;
  fs::remove_all(dir);
  const double n = ranks;
  std::printf("merge %s: %d ranks, %.1f M events, dumps written in %.0f s; survey+align+findings "
              "%.1f s CPU, trace %.1f s CPU (%.1f GB), wall %.0f s; peak RSS %.0f MiB (rank 0 "
              "alone: %.0f MiB)\n",
              spec.c_str(), ranks, static_cast<double>(all.events) / 1e6, write_s, all.survey_s,
              all.trace_s, static_cast<double>(all.trace_bytes) / 1e9, merge_wall, all.rss_mib,
              one.rss_mib);
  bench::PrintFigure("17a-" + spec, "merge, survey + clock alignment + findings, CPU per rank",
                     Fmt("%.1f ms", all.survey_s / n * 1e3),
                     Fmt("rank 0 alone: %.1f ms", one.survey_s * 1e3), "INFO");
  bench::PrintFigure("17b-" + spec, "merged trace (JSON into a counting sink), CPU per rank",
                     Fmt("%.1f ms", all.trace_s / n * 1e3),
                     Fmt("rank 0 alone: %.1f ms", one.trace_s * 1e3), "INFO");
  bench::PrintFigure("17c-" + spec, "peak RSS of the whole merge, and per rank",
                     Fmt("%.0f MiB (%.2f MiB per rank)", all.rss_mib, all.rss_mib / n),
                     Fmt("rank 0 alone: %.0f MiB", one.rss_mib), "INFO");
  bench::PrintFigure("17d-" + spec, "bytes the merged trace would have",
                     Fmt("%.1f GB", static_cast<double>(all.trace_bytes) / 1e9),
                     Fmt("rank 0 alone: %.2f GB", static_cast<double>(one.trace_bytes) / 1e9),
                     "INFO");
  return 0;
}
