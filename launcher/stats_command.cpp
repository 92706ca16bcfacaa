// `gprof-run stats PATH`: nsys-style summary reports (analysis/tables/stats.h) from an output directory
// or one dump. Launcher process only.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/samples/cpu_samples.h"
#include "analysis/tables/stats.h"
#include "analysis/tables/step_breakdown.h"
#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "launcher/python/torch_memory_file.h"
#include "launcher/recover_dumps.h"
#include "launcher/render/segmented_render.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "model/dump.h"
#include "model/dump_segment_reader.h"

namespace gprof::launcher {
namespace {

constexpr const char* kStatsUsage =
    "Usage: gprof-run stats PATH [--report NAME[,NAME...]]... [--format table|csv|json]\n"
    "                       [--by-step] [--segment-render-mb N]\n"
    "Nsight Systems-style summaries of a gprof-run output directory (every process's whole-run\n"
    "dump, or its window dumps summed when it has none) or of one .gpdump file, on stdout.\n"
    "Reports: cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,\n"
    "nvtx_sum (default: all five), and memory_sum (CUDA allocations and frees per owning NVTX\n"
    "range or API call: count, MB, largest, peak in use), cpu_sample_sum (--cpu-sampling: samples\n"
    "per function, self and total), cuda_api_stack_sum (CUDA calls with a\n"
    "native stack, --backtrace, per API and calling function: count, total time). --by-step adds\n"
    "step_sum (per step: wall time, GPU busy, kernels) and step_breakdown (per step: its time\n"
    "in kernels, copies, memsets, CUDA calls, DataLoader, other CPU work, other; alone it prints\n"
    "only those two. A dump over --segment-render-mb MiB (default 128) is read segment by segment\n"
    "for the five default reports and cuda_api_stack_sum (exact: each row keeps its samples,\n"
    "16 bytes a launch, not the dump); memory_sum and --by-step read it whole.\n"
    "Exit: 0 ok, 1 no dump or a dump could not be read, 2 usage error.\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n%s", message.c_str(), kStatsUsage);
  return kExitUsage;
}

constexpr std::string_view kCpuSampleReportName = "cpu_sample_sum";

// Adds the dump at `path` to `stats` one segment at a time (each report of a record alone: a
// segment's rows are the run's rows of its records); false with `error` when it cannot be read.
bool AddInSegments(const std::string& path, StatsCollector* stats, std::string* error) {
  DumpSegmentReader reader;
  if (!reader.Open(path, error)) return false;
  while (reader.Next(error)) stats->Add(reader.profile());
  if (!error->empty()) return false;
  if (const std::string text = IncompleteDumpText(reader.profile(), path); !text.empty()) {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  return true;
}

// cpu_sample_sum: per dump, its samples by function (analysis/samples/cpu_samples.h); a text
// table whatever --format says.
void PrintCpuSampleSum(const std::vector<std::string>& dumps) {
  for (const std::string& dump : dumps) {
    Profile profile;
    std::string error;
    if (!ReadDump(dump, &profile, &error)) continue;  // already reported
    std::printf("\n ** CPU Sample Summary (cpu_sample_sum): %s\n\n", dump.c_str());
    if (profile.cpu_sample_counters.hz == 0) {
      std::printf("No CPU samples: the run had no --cpu-sampling.\n");
      continue;
    }
    std::fputs(FormatCpuSampleSum(profile, NameCpuSamples(profile)).c_str(), stdout);
  }
}

}  // namespace

int StatsCommand(const std::vector<std::string>& args) {
  std::vector<std::string> reports;
  std::string format = "table", path;
  bool by_step = false;
  TraceOptions segments;  // --segment-render-mb
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    const std::string& value = a.value();
    if (arg == "--help" || arg == "-h") {
      std::fputs(kStatsUsage, stdout);
      return 0;
    } else if (arg == "--report") {
      if (!a.TakeValue()) return Usage("--report needs a value");
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        const std::string name = value.substr(start, comma - start);
        std::vector<std::string_view> known = StatsReportNames();
        known.push_back(kMemoryReportName);
        known.push_back(kStackReportName);
        known.push_back(kCpuSampleReportName);
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          std::string list;
          for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
          return Usage("--report " + name + ": unknown report (one of " + list + ")");
        }
        if (std::find(reports.begin(), reports.end(), name) == reports.end()) {
          reports.push_back(name);
        }
        start = comma + 1;
      }
    } else if (arg == "--format") {
      if (!a.TakeValue()) return Usage("--format needs a value");
      if (value != "table" && value != "csv" && value != "json") {
        return Usage("--format " + value + ": expected table, csv or json");
      }
      format = value;
    } else if (arg == "--by-step" && !a.has_inline_value()) {
      by_step = true;
    } else if (arg == "--segment-render-mb") {
      if (!a.TakeValue()) return Usage("--segment-render-mb needs a value");
      if (std::string e = ParseSegmentRenderMb(value, &segments); !e.empty()) return Usage(e);
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage("unknown flag " + arg + (a.has_inline_value() ? "=" + value : "") +
                   DidYouMean(arg, FlagsInUsage(kStatsUsage)));
    } else if (path.empty()) {
      path = arg;
    } else {
      return Usage("one directory or dump at a time (got " + path + " and " + arg + ")");
    }
  }
  if (path.empty()) return Usage("no directory or dump given");
  if (reports.empty() && !by_step) {
    for (std::string_view r : StatsReportNames()) reports.emplace_back(r);
  }

  std::error_code ec;
  std::vector<std::string> dumps;
  if (std::filesystem::is_directory(path, ec)) {
    dumps = ProcessDumps(path);
  } else if (std::filesystem::is_regular_file(path, ec)) {
    dumps.push_back(path);
  } else {
    return Usage(path + " is neither a directory nor a file");
  }
  if (dumps.empty()) {
    std::fprintf(stderr, "gprof-run: no dump in %s\n", path.c_str());
    return kExitInternal;
  }

  StatsCollector stats;
  std::vector<StepBreakdown> breakdown;  // --by-step: every dump's steps, in dump order
  int failed = 0;
  // Reports of records alone: a long dump's segments one at a time give the same rows.
  const bool per_record =
      !by_step && std::none_of(reports.begin(), reports.end(), [](const std::string& r) {
        return r == kMemoryReportName;
      });
  for (const std::string& dump : dumps) {
    Profile profile;
    std::string error;
    if (per_record && RenderInSegments(dump, segments)) {
      if (!AddInSegments(dump, &stats, &error)) {
        std::fprintf(stderr, "gprof-run: error: %s; left out of the stats\n", error.c_str());
        ++failed;
      }
      continue;
    }
    if (!ReadDump(dump, &profile, &error)) {
      std::fprintf(stderr, "gprof-run: error: %s; left out of the stats\n", error.c_str());
      ++failed;
      continue;
    }
    if (const std::string text = IncompleteDumpText(profile, dump); !text.empty()) {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
    std::fputs(AttachTorchMemoryBeside(dump, &profile).c_str(), stderr);
    stats.Add(profile);
    if (by_step) {
      for (const StepBreakdown& b : StepBreakdowns(profile)) breakdown.push_back(b);
    }
  }
  if (failed == static_cast<int>(dumps.size())) return kExitInternal;

  std::vector<StatsTable> tables;
  for (const std::string& r : reports) {
    if (r != kCpuSampleReportName) tables.push_back(stats.Table(r));
  }
  if (std::find(reports.begin(), reports.end(), kCpuSampleReportName) != reports.end()) {
    PrintCpuSampleSum(dumps);
  }
  if (by_step) {
    tables.push_back(stats.Table(kStepReportName));
    tables.push_back(StepBreakdownTable(breakdown));
  }
  const std::string out = format == "json"  ? FormatStatsJson(tables)
                          : format == "csv" ? FormatStatsCsv(tables)
                                            : FormatStatsTables(tables);
  std::fputs(out.c_str(), stdout);
  return failed == 0 ? 0 : kExitInternal;
}

}  // namespace gprof::launcher
