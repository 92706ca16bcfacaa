// The closing line's pieces (see closing_line.h). Launcher process only.
#include "launcher/render/closing_line.h"

#include <cstdio>
#include <map>
#include <string_view>

#include "analysis/attribution/gpu_attribution.h"
#include "launcher/report.h"
#include "text/format.h"

namespace gprof::launcher {

// The start-up, a phase of its own: from the start of collection to the first step (the Python
// hook's ProfilerStep#0 begins at the model's first forward, docs/PYTORCH.md), time in no step.
// "" when the profile has no steps.
std::string StartupText(const Profile& p) {
  const HostRange* first = nullptr;
  for (const HostRange& r : p.ranges) {
    if (IsStepRange(p, r) && (first == nullptr || r.start_ns < first->start_ns)) first = &r;
  }
  if (first == nullptr || first->start_ns < p.info.start_ns) return "";
  return "start-up " + FormatDuration(first->start_ns - p.info.start_ns) + " before " +
         std::string(p.strings.Get(first->name)) + " (in no step)";
}

namespace {

// Exact texts of the Python hook's NVTX marks (_gprof_run_torch.py).
constexpr std::string_view kTorchProfilerStarted = "gprof-run: torch.profiler started";
constexpr std::string_view kTorchProfilerStopped = "gprof-run: torch.profiler stopped";
constexpr std::string_view kOwnSteps = "gprof-run: program has its own steps";

void AddTorchMarks(Totals* t, const Profile& p) {
  for (const StepRun& r : ProgramProfilerSteps(p)) t->program_profiler_steps.push_back(r);
  std::map<uint32_t, uint64_t> started;  // by thread: when the program's profiler started
  for (const HostMark& m : p.marks) {
    const std::string_view name = p.strings.Get(m.name);
    if (name == kTorchProfilerStarted) {
      ++t->torch_profiler_spans;
      started[m.tid] = m.ts_ns;
    } else if (name == kTorchProfilerStopped) {
      auto it = started.find(m.tid);
      if (it != started.end() && m.ts_ns >= it->second) {
        t->torch_profiler_ns += m.ts_ns - it->second;
        started.erase(it);
      }
    } else if (name == kOwnSteps) {
      t->own_steps = true;
    }
  }
}

}  // namespace

// "" when the program never ran torch.profiler, else what happened, for the closing line.
std::string TorchProfilerText(const Totals& t, const std::string& cupti) {
  std::string out;
  if (t.torch_profiler_spans > 0) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f s", static_cast<double>(t.torch_profiler_ns) / 1e9);
    out = "the program ran torch.profiler " + Plural(t.torch_profiler_spans, "time", "times") +
          " (" + secs + "): gprof-run's torch op ranges stepped aside meanwhile, " +
          (cupti.rfind("CUPTI ", 0) == 0 ? "CUPTI stayed with gprof-run"
                                         : "gprof-run did not hold CUPTI");
  }
  const std::string had = ProgramProfilerStepsText(MergeStepRuns(t.program_profiler_steps));
  if (!had.empty()) out += (out.empty() ? "" : "; ") + had;
  if (t.own_steps) {
    out += std::string(out.empty() ? "" : "; ") +
           "the program has its own steps (prof.step() / ProfilerStep ranges): optimizer steps "
           "were not used";
  }
  return out;
}

void AddToTotals(Totals* t, const Profile& p) {
  AddTorchMarks(t, p);
  t->ranges += p.ranges.size();
  t->api_calls += p.api_calls.size();
  t->kernels += p.kernels.size();
  t->copies += p.memcpys.size();
  t->memsets += p.memsets.size();
  AddCounters(&t->counters, p.counters);
  t->stacks_dropped += p.stack_counters.dropped;
}

std::string CuptiText(const Profile& p) {
  if (!p.info.cupti_library.empty()) return "CUPTI " + p.info.cupti_library;
  if (!p.info.gpu_status.empty()) return "GPU: " + p.info.gpu_status;
  return "GPU: not collected";
}

// The counters, then the native stacks dropped (--backtrace): those calls were recorded but
// show no stack. Their records are also counted in host_events_dropped (the same full buffer),
// but a stack missing from the trace and `stats --report cuda_api_stack_sum` is worth its own
// name, as the table's notes give it.
std::string LossText(const Counters& c, uint64_t stacks_dropped) {
  std::string out;
  const auto add = [&](const char* name, uint64_t value) {
    if (value == 0) return;
    out += (out.empty() ? "LOSSES: " : ", ") + std::string(name) + "=" + std::to_string(value);
  };
  ForEachCounter(c, [&](const char* name, uint64_t value, const char*) { add(name, value); });
  add("stacks_dropped", stacks_dropped);
  return out.empty() ? "no losses" : out;
}

}  // namespace gprof::launcher
