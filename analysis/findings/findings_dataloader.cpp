// dataloader_bound (findings_rules.h): the share of the step time that the thread stepping the
// optimizer spends in torch's DataLoader __next__, the record_function range torch opens around
// each batch it hands out ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
// torch/utils/data/dataloader.py: _BaseDataLoaderIter._profile_name). The Python hook marks each
// DataLoader iteration with its settings (_gprof_run_dataloader.py), which name the loader here.
// Rule and thresholds: docs/FINDINGS.md.
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"

namespace gprof::findings_internal {

namespace {

constexpr std::string_view kNextPrefix = "enumerate(DataLoader)#";
constexpr std::string_view kNextSuffix = ".__next__";
// The hook's mark (python/gprof_run_hook/_gprof_run_dataloader.py): key=value settings.
constexpr std::string_view kMarkPrefix = "gprof-run: DataLoader ";

bool IsNext(std::string_view name) {
  return name.size() > kNextPrefix.size() + kNextSuffix.size() && name.starts_with(kNextPrefix) &&
         name.ends_with(kNextSuffix);
}

// "key=value key=value ..." after the mark's prefix.
std::map<std::string, std::string> Settings(std::string_view mark) {
  std::map<std::string, std::string> out;
  mark.remove_prefix(kMarkPrefix.size());
  while (!mark.empty()) {
    const size_t end = std::min(mark.find(' '), mark.size());
    const std::string_view item = mark.substr(0, end);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos) out[std::string(item.substr(0, eq))] = item.substr(eq + 1);
    mark.remove_prefix(std::min(end + 1, mark.size()));
  }
  return out;
}

}  // namespace

void DataLoaderFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  if (a.steps().empty() || a.window() == 0) return;
  // The threads that step: those of the ProfilerStep#N ranges (the hook opens them in
  // optimizer.step()) and of detected steps.
  std::set<uint32_t> steppers;
  for (const HostRange& r : p.ranges) {
    if (IsStepRange(p, r)) steppers.insert(r.tid);
  }
  for (const Step& s : p.steps) steppers.insert(s.tid);
  std::map<uint32_t, std::vector<Interval>> next_by_thread;
  std::map<uint32_t, std::vector<size_t>> ranges_by_thread;
  for (size_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (!steppers.count(r.tid) || r.end_ns <= a.ws() || r.start_ns >= a.we()) continue;
    if (!IsNext(p.strings.Get(r.name))) continue;
    next_by_thread[r.tid].emplace_back(r.start_ns, r.end_ns);
    ranges_by_thread[r.tid].push_back(i);
  }
  // The stepping thread with the most time in the loader.
  uint32_t tid = 0;
  uint64_t loading = 0;
  for (auto& [t, v] : next_by_thread) {
    const uint64_t covered = CoveredIn(MergeIntervals(v), a.ws(), a.we());
    if (covered > loading) {
      loading = covered;
      tid = t;
    }
  }
  const double share = Share(loading, a.window());
  if (loading == 0 || share < kDataLoaderMinShare) return;
  std::vector<size_t>& calls = ranges_by_thread[tid];
  std::stable_sort(calls.begin(), calls.end(), [&](size_t x, size_t y) {
    return Dur(p.ranges[x].start_ns, p.ranges[x].end_ns) >
           Dur(p.ranges[y].start_ns, p.ranges[y].end_ns);
  });
  // The loader: the hook's last mark on this thread before the longest __next__.
  const HostRange& longest = p.ranges[calls.front()];
  std::map<std::string, std::string> settings;
  for (const HostMark& m : p.marks) {
    if (m.tid != tid || m.ts_ns > longest.start_ns) continue;
    const std::string_view text = p.strings.Get(m.name);
    if (text.starts_with(kMarkPrefix)) settings = Settings(text);
  }
  const std::string_view range_name = p.strings.Get(longest.name);
  const std::string iterator(range_name.substr(
      kNextPrefix.size(), range_name.size() - kNextPrefix.size() - kNextSuffix.size()));
  const auto setting = [&](const char* key) {
    auto it = settings.find(key);
    return it == settings.end() ? std::string() : it->second;
  };
  const std::string dataset = setting("dataset");
  const std::string workers = setting("num_workers");
  std::string loader = "the DataLoader";
  if (!dataset.empty()) loader += " over " + dataset;
  loader += " (" + iterator;
  if (!workers.empty()) loader += ", num_workers=" + workers;
  loader += ")";

  Finding f;
  f.id = "dataloader_bound";
  f.severity = share >= kDataLoaderHighShare   ? Severity::kHigh
               : share >= kDataLoaderWarnShare ? Severity::kWarn
                                               : Severity::kInfo;
  for (size_t i = 0; i < calls.size() && i < kMaxPlaces; ++i) {
    const HostRange& r = p.ranges[calls[i]];
    Place pl = a.PlaceAt(r.start_ns, r.end_ns);
    pl.thread = tid;
    pl.name = std::string(p.strings.Get(r.name));
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  f.evidence = {Duration("dataloader_us", loading), Pct("dataloader_pct", share),
                Duration("step_time_us", a.window()), Count("steps", a.steps().size()),
                Count("batches", calls.size()), Count("thread", tid),
                Duration("longest_us", Dur(longest.start_ns, longest.end_ns)),
                Text("iterator", iterator)};
  if (!dataset.empty()) f.evidence.push_back(Text("dataset", dataset));
  if (!workers.empty()) {
    f.evidence.push_back(Count("num_workers", std::strtoull(workers.c_str(), nullptr, 10)));
  }
  for (const char* key : {"batch_size", "pin_memory", "persistent_workers", "prefetch_factor"}) {
    if (const std::string v = setting(key); !v.empty()) f.evidence.push_back(Text(key, v));
  }
  f.title = "DataLoader-bound: the training thread " + std::to_string(tid) + " spends " +
            Percent(share) + " of the step time (" + FormatDuration(loading) + " of " +
            FormatDuration(a.window()) + ", " + std::to_string(a.steps().size()) +
            " steps) waiting for batches from " + loader;
  f.advice =
      std::string(workers == "0" ? "The batches are made on the training thread (num_workers=0). "
                                 : "") +
      "Load in parallel and ahead: raise num_workers (worker processes make batches while the "
      "step runs), keep them between epochs with persistent_workers=True, let each prefetch more "
      "batches (prefetch_factor), use pin_memory=True for faster copies to the GPU, and move "
      "per-sample transforms (augmentation, normalization) to the GPU, on whole batches.";
  out->push_back(std::move(f));
}

}  // namespace gprof::findings_internal
