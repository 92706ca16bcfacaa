#include "model/program_profiler_steps.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace gprof {
namespace {

constexpr std::string_view kMarkPrefix = "gprof-run: the program's own torch.profiler had ";
// The Python hook's mark (python/gprof_run_hook/_gprof_run_torch.py, MARK_PROFILER_STARTED).
constexpr std::string_view kProfilerStarted = "gprof-run: torch.profiler started";
constexpr std::string_view kStepPrefix = "ProfilerStep#";

std::string RunText(const StepRun& r) {
  return r.first == r.second ? std::to_string(r.first)
                             : std::to_string(r.first) + "-" + std::to_string(r.second);
}

bool ParseNumber(std::string_view* s, uint32_t* out) {
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), *out);
  if (ec != std::errc() || end == s->data()) return false;
  s->remove_prefix(static_cast<size_t>(end - s->data()));
  return true;
}

// N of a range named "ProfilerStep#N" (torch's NVTX suffixes are split off when it is read).
bool StepNumber(std::string_view name, uint32_t* n) {
  if (name.rfind(kStepPrefix, 0) != 0) return false;
  name.remove_prefix(kStepPrefix.size());
  return ParseNumber(&name, n) && name.empty();
}

}  // namespace

std::string ProgramProfilerStepsMark(const StepRun& run) {
  return std::string(kMarkPrefix) + (run.first == run.second ? "step " : "steps ") + RunText(run);
}

bool ParseProgramProfilerStepsMark(std::string_view name, StepRun* run) {
  if (name.rfind(kMarkPrefix, 0) != 0) return false;
  name.remove_prefix(kMarkPrefix.size());
  const bool one = name.rfind("step ", 0) == 0;
  if (!one && name.rfind("steps ", 0) != 0) return false;
  name.remove_prefix(one ? 5 : 6);
  if (!ParseNumber(&name, &run->first)) return false;
  run->second = run->first;
  if (!one && (name.empty() || name[0] != '-')) return false;
  if (!one) {
    name.remove_prefix(1);
    if (!ParseNumber(&name, &run->second) || run->second < run->first) return false;
  }
  return name.empty();
}

std::vector<StepRun> MergeStepRuns(std::vector<StepRun> runs) {
  std::sort(runs.begin(), runs.end());
  std::vector<StepRun> out;
  for (const StepRun& r : runs) {
    if (!out.empty() && uint64_t{r.first} <= uint64_t{out.back().second} + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<StepRun> ProgramProfilerSteps(const Profile& p) {
  std::vector<StepRun> runs;
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> steps;  // by thread: (start, N)
  for (const HostRange& r : p.ranges) {
    uint32_t n = 0;
    if (StepNumber(p.strings.Get(r.name), &n)) steps[r.tid].emplace_back(r.start_ns, n);
  }
  for (auto& [tid, list] : steps) std::sort(list.begin(), list.end());
  for (const HostMark& m : p.marks) {
    const std::string_view name = p.strings.Get(m.name);
    StepRun run;
    if (ParseProgramProfilerStepsMark(name, &run)) {
      runs.push_back(run);
      continue;
    }
    if (name != kProfilerStarted) continue;
    const auto it = steps.find(m.tid);
    if (it == steps.end()) continue;
    const auto& list = it->second;
    // The first step that began after the mark, and the one before it (if any).
    const auto after = std::upper_bound(list.begin(), list.end(),
                                        std::make_pair(m.ts_ns, UINT32_MAX));
    if (after == list.end()) continue;  // none seen again: which steps it had is unknown
    const uint32_t next = after->second;
    const int64_t before = after == list.begin() ? -1 : int64_t{std::prev(after)->second};
    // A number not above the one before starts a new numbering (from 0, as torch's does).
    const uint32_t first = next > before ? static_cast<uint32_t>(before + 1) : 0;
    if (first < next) runs.emplace_back(first, next - 1);
  }
  return MergeStepRuns(std::move(runs));
}

std::string ProgramProfilerStepsText(const std::vector<StepRun>& runs) {
  if (runs.empty()) return "";
  const bool many = runs.size() > 1 || runs[0].first != runs[0].second;
  std::string out = many ? "steps " : "step ";
  for (size_t i = 0; i < runs.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == runs.size() ? " and " : ", ") + RunText(runs[i]);
  }
  return out + " ran under the program's own torch.profiler: " + (many ? "their" : "its") +
         " ops went to it, not to gprof-run";
}

}  // namespace gprof
