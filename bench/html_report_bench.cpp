// Figure 11: report.html (outputs/html/html_report.h) of a profile with N launches (default 1 M):
// the page's size and the time to make and write it, beyond what the run computes anyway for the
// other outputs (the table's rows and the findings, whose times are printed for reference). The
// page's own work is a few linear passes over the records; its size is bounded whatever N
// (kHtmlReportMaxBytes), so the figure to watch is that it stays flat.
//   10a  best case (bench_profile.h: one name, one thread, one stream) with a step every 1,000
//        launches: page bytes
//   10b  the same: CPU seconds to format the page and write it to a file
//   10c/10d  the realistic workload of bench/workload.h (300 names, 4 threads, 8 streams), steps
//        every 1,200 calls, and allocations
//   html_report_bench [launches] [--dir DIR] [--only best|mixed]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "analysis/findings/findings.h"
#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "model/output_file.h"
#include "outputs/html/html_report.h"
#include "outputs/table/table.h"

using namespace gprof;

namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// ProfilerStep#N ranges over the profile's calls, one per `calls_per_step` calls of the main
// thread, and an allocation and a free per step on device 0: what a training loop adds.
void AddSteps(Profile* p, size_t calls_per_step) {
  const uint32_t main_tid = p->api_calls.empty() ? p->info.pid : p->api_calls.front().tid;
  uint32_t number = 0;
  for (size_t i = 0; i + calls_per_step <= p->api_calls.size(); i += calls_per_step) {
    const uint64_t start = p->api_calls[i].start_ns;
    const uint64_t end = p->api_calls[i + calls_per_step - 1].end_ns;
    p->ranges.push_back({start, end, p->strings.Intern("ProfilerStep#" + std::to_string(number)),
                         main_tid, 0, kRangeStep, 0});
    for (const MemoryOpKind kind : {MemoryOpKind::kAlloc, MemoryOpKind::kFree}) {
      MemoryOp m{};
      m.ts_ns = kind == MemoryOpKind::kAlloc ? start : end;
      m.address = 0x7f0000000000ull + number;
      m.bytes = kind == MemoryOpKind::kAlloc ? (64ull << 20) : 0;
      m.op = kind;
      m.stream_id = 0xffffffffu;
      p->memory_ops.push_back(m);
    }
    ++number;
  }
}

void Figures(const Profile& p, const std::string& suffix, const std::string& shape,
             const std::string& dir) {
  const double launches = static_cast<double>(p.api_calls.size());
  // What the run computes anyway (the table's rows and the findings): for reference only.
  double t0 = bench::NowSeconds();
  const TableRows rows = SortedTableRows(p, TableOptions{});
  const double table_s = bench::NowSeconds() - t0;
  t0 = bench::NowSeconds();
  FindingsContext context;
  const std::vector<Finding> findings = FindFindings(p, &context);
  const double findings_s = bench::NowSeconds() - t0;

  HtmlReportInput in;
  in.profile = &p;
  in.findings = &findings;
  in.context = &context;
  in.table = &rows;
  in.links.table = "table.txt";
  in.links.trace = "trace.json";
  in.links.pftrace = "trace.pftrace";
  in.links.findings_text = "findings.txt";
  in.links.findings_json = "findings.json";
  const std::string path = dir + "/bench.report.html";
  double best = 1e30;
  size_t bytes = 0;
  for (int rep = 0; rep < 3; ++rep) {  // best of 3: the machine is shared
    t0 = bench::NowSeconds();
    const std::string page = FormatHtmlReport(in);
    if (std::string e = WriteOutputFile(path, page, /*create_dirs=*/false); !e.empty()) {
      std::fprintf(stderr, "html_report_bench: %s\n", e.c_str());
      std::exit(1);
    }
    best = std::min(best, bench::NowSeconds() - t0);
    bytes = page.size();
  }
  std::remove(path.c_str());
  std::printf("report.html%s: %.0f launches, %zu steps, %zu findings: %zu bytes in %.3f s "
              "(for reference: table rows %.3f s, findings %.3f s)\n",
              suffix.c_str(), launches, context.steps.size(), findings.size(), bytes, best,
              table_s, findings_s);
  const std::string n = Fmt("%.2g", launches);
  bench::PrintFigure(std::string("11") + (suffix.empty() ? "a" : "c"),
                     "report.html bytes, " + n + " launches (" + shape + ")",
                     Fmt("%.0f KiB", static_cast<double>(bytes) / 1024.0),
                     "<= " + std::to_string(kHtmlReportMaxBytes >> 10) + " KiB",
                     bytes <= kHtmlReportMaxBytes ? "PASS" : "FAIL");
  bench::PrintFigure(std::string("11") + (suffix.empty() ? "b" : "d"),
                     "report.html format + write, beyond table rows and findings (CPU s), " + n +
                         " launches",
                     Fmt("%.3f s", best), "< 1 s", best < 1.0 ? "PASS" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  bench::LaunchProfileOptions opt;
  std::string dir = "/tmp", only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      opt.launches = std::strtoull(argv[i], nullptr, 10);
    }
  }
  if (only.empty() || only == "best") {
    Profile p = bench::MakeLaunchProfile(opt);
    AddSteps(&p, 1'000);
    Figures(p, "", "best case, a step per 1,000", dir);
  }
  if (only.empty() || only == "mixed") {
    Profile p = bench::MakeMixedProfile(opt.launches);
    AddSteps(&p, bench::kMixedStepCalls);
    Figures(p, "-mixed", "realistic: 300 names, 4 threads, 8 streams", dir);
  }
  return 0;
}
