// Figure 19: the merge read segment by segment, 64 ranks x 1 M events. Writes N rank dumps of
// about M events each in S segments (rank_dumps.h: figure 17's ranks), then measures, each as a
// child process (wall time and ru_maxrss from wait4):
//   a  `gprof-run merge -q --no-html DIR` of all N ranks (past ~1 GB of trace: a summary of every
//      rank and the slowest in full, merge_trace_policy.h), and the bytes of its trace.json
//      (then `gprof-run check` of it, not timed);
//   b  the same merge with every rank in full into a sink that only counts bytes (this build's
//      survey and trace, in process: the whole trace would not fit on the disk);
//   c  the peer, PEER_GPROF_RUN (the commit before, built elsewhere) `merge -q --no-html` of the
//      first P ranks (its whole trace is written: P is what the disk holds), beside this build's
//      `merge -q --no-html --full-trace` of the same P ranks.
//   merge_stream_bench DIR GPROF_RUN PEER_GPROF_RUN [RANKSxEVENTS [SEGMENTS [P]]]
//      (defaults 64x1000000, 10, 8)
// DIR receives the dumps and the merged outputs; everything is removed when done.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/ranks/merge.h"
#include "bench/bench_profile.h"
#include "bench/rank_dumps.h"
#include "model/dump_segment_reader.h"
#include "outputs/trace/merged_trace.h"

using namespace gprof;

namespace {

namespace fs = std::filesystem;

struct Run {
  double wall_s = 0, rss_mib = 0;
  uint64_t bytes = 0;
};

// Runs `child` in a child process; its exit status must be 0.
Run InChild(const std::function<void()>& child) {
  Run r;
  const double t0 = bench::WallSeconds();
  const pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  r.wall_s = bench::WallSeconds() - t0;
  r.rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "merge_stream_bench: a child failed (status %d)\n", status);
    std::exit(1);
  }
  return r;
}

Run Exec(std::vector<std::string> all) {
  return InChild([&] {
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  });
}

// `check`: also `gprof-run check` of the trace (the bench stops when it fails).
Run Merge(const std::string& gprof_run, const std::vector<std::string>& args,
          const std::string& out, bool check = false) {
  std::vector<std::string> all = {gprof_run, "merge", "-q", "--no-html", "-o", out};
  all.insert(all.end(), args.begin(), args.end());
  Run r = Exec(all);
  std::error_code ec;
  r.bytes = fs::file_size(out + "/trace.json", ec);
  if (check) Exec({gprof_run, "check", out + "/trace.json"});
  fs::remove_all(out);
  return r;
}

class Segments : public MergeSegments {
 public:
  explicit Segments(const std::string& path) {
    std::string e;
    if (!reader_.Open(path, &e)) std::exit(1);
  }
  const Profile* Next() override {
    std::string e;
    if (reader_.Next(&e)) return &reader_.profile();
    if (!e.empty()) std::exit(1);
    return nullptr;
  }

 private:
  DumpSegmentReader reader_;
};

// This build's merge of every rank in full into a counting sink; the bytes come back in a pipe.
Run CountingMerge(const std::vector<std::string>& paths) {
  int fds[2];
  if (::pipe(fds) != 0) std::exit(1);
  Run r = InChild([&] {
    std::vector<MergeInput> inputs;
    for (const std::string& path : paths) {
      Segments s(path);
      MergeInput in;
      in.file = path;
      for (bool first = true; const Profile* p = s.Next(); first = false) {
        AddSegmentToMerge(*p, first, &in);
      }
      inputs.push_back(std::move(in));
    }
    SortMergeInputs(&inputs);
    AlignMergeClocks(&inputs);
    uint64_t bytes = 0;
    WriteMergedTrace(
        inputs,
        [&](size_t k) -> std::unique_ptr<MergeSegments> {
          return std::make_unique<Segments>(inputs[k].file);
        },
        "trace.json", JsonSink{&bytes, [](void* ctx, const char*, size_t n) {
                                 *static_cast<uint64_t*>(ctx) += n;
                               }});
    if (::write(fds[1], &bytes, sizeof bytes) != sizeof bytes) ::_exit(1);
  });
  if (::read(fds[0], &r.bytes, sizeof r.bytes) != sizeof r.bytes) std::exit(1);
  ::close(fds[0]), ::close(fds[1]);
  return r;
}

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: merge_stream_bench DIR GPROF_RUN PEER_GPROF_RUN "
                         "[RANKSxEVENTS [SEGMENTS [P]]]\n");
    return 2;
  }
  const std::string spec = argc > 4 ? argv[4] : "64x1000000";
  const int segments = argc > 5 ? std::atoi(argv[5]) : 10;
  const int peer_ranks = argc > 6 ? std::atoi(argv[6]) : 8;
  const size_t x = spec.find('x');
  const int ranks = std::atoi(spec.substr(0, x).c_str());
  const uint64_t events = std::strtoull(spec.substr(x + 1).c_str(), nullptr, 10);
  const std::string dir = std::string(argv[1]) + "/merge-stream-" + spec;
  fs::remove_all(dir);
  std::vector<std::string> rank_dirs, paths;
  for (int r = 0; r < ranks; ++r) {
    rank_dirs.push_back(dir + "/in/rank" + std::to_string(r));
    paths.push_back(rank_dirs.back() + "/train." + std::to_string(30000 + r) + ".gpdump");
    fs::create_directories(rank_dirs.back());
  }
  const Run written = InChild([&] {  // the dumps' writer's memory stays out of the merges'
    Profile base = bench::RankBaseProfile(events);
    for (int r = 0; r < ranks; ++r) bench::WriteRankDump(&base, r, ranks, paths[r], segments);
  });
  uint64_t dump_bytes = 0;
  for (const std::string& p : paths) dump_bytes += fs::file_size(p);
  const Run all = Merge(argv[2], {dir + "/in"}, dir + "/out-all", /*check=*/true);
  const Run counted = CountingMerge(paths);
  const std::vector<std::string> some(rank_dirs.begin(), rank_dirs.begin() + peer_ranks);
  const Run peer = Merge(argv[3], some, dir + "/out-peer");
  const Run mine = Merge(argv[2], [&] {
    std::vector<std::string> a = {"--full-trace"};
    a.insert(a.end(), some.begin(), some.end());
    return a;
  }(), dir + "/out-mine");
  fs::remove_all(dir);
  std::printf("merge-stream %s in %d segments per rank: dumps %.2f GB written in %.0f s\n",
              spec.c_str(), segments, static_cast<double>(dump_bytes) / 1e9, written.wall_s);
  const std::string n = std::to_string(ranks), p = std::to_string(peer_ranks);
  bench::PrintFigure("19a-" + spec, "gprof-run merge of " + n + " ranks: wall, peak RSS, trace.json",
                     Fmt("%.1f s, %.0f MiB, %.2f GB", all.wall_s, all.rss_mib,
                         static_cast<double>(all.bytes) / 1e9),
                     "-", "INFO");
  bench::PrintFigure("19b-" + spec, "every rank in full into a counting sink: wall, peak RSS, bytes",
                     Fmt("%.1f s, %.0f MiB, %.1f GB", counted.wall_s, counted.rss_mib,
                         static_cast<double>(counted.bytes) / 1e9),
                     "-", "INFO");
  bench::PrintFigure("19c-" + spec, "gprof-run merge --full-trace of the first " + p + " ranks",
                     Fmt("%.1f s, %.0f MiB, %.2f GB", mine.wall_s, mine.rss_mib,
                         static_cast<double>(mine.bytes) / 1e9),
                     Fmt("peer: %.1f s, %.0f MiB, %.2f GB", peer.wall_s, peer.rss_mib,
                         static_cast<double>(peer.bytes) / 1e9),
                     "INFO");
  return 0;
}
