// Python samples -> python_function slices (python_slices.h). Launcher process only.
#include "analysis/samples/python_slices.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace gprof {

PythonSliceSet PythonSlicesFrom(const PythonSamples& s, uint64_t from_ns, uint64_t to_ns) {
  PythonSliceSet set;
  set.period_ns = s.period_ns;
  set.hz = s.hz;

  // A slice is a function (file, name, first line), whichever of its lines ran.
  std::map<std::tuple<std::string, std::string, uint32_t>, uint32_t> function_ids;
  std::vector<uint32_t> function_of_frame(s.frames.size());
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const PythonFrame& f = s.frames[i];
    auto [it, added] = function_ids.try_emplace({f.file, f.function, f.first_line},
                                                static_cast<uint32_t>(set.names.size()));
    if (added) set.names.push_back(f.file + "(" + std::to_string(f.first_line) + "): " + f.function);
    function_of_frame[i] = it->second;
  }

  // One track per thread: its tid when known, else its Python ident.
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> track_ids;
  std::vector<uint32_t> track_of_thread(s.threads.size());
  for (size_t i = 0; i < s.threads.size(); ++i) {
    const PythonThread& t = s.threads[i];
    const std::pair<uint32_t, uint64_t> key{t.tid, t.tid != 0 ? 0 : t.ident};
    auto [it, added] = track_ids.try_emplace(key, static_cast<uint32_t>(set.tracks.size()));
    if (added) set.tracks.push_back({t.tid, t.ident, t.name});
    if (set.tracks[it->second].thread_name.empty()) set.tracks[it->second].thread_name = t.name;
    track_of_thread[i] = it->second;
  }

  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> per_track(set.tracks.size());
  for (const PythonSample& sm : s.samples) {
    if (sm.thread >= track_of_thread.size() || sm.stack >= s.stacks.size()) continue;
    if (sm.ts_ns < from_ns || sm.ts_ns > to_ns) {
      ++set.samples_outside;
      continue;
    }
    ++set.samples_used;
    per_track[track_of_thread[sm.thread]].emplace_back(sm.ts_ns, sm.stack);
  }

  struct Open {
    uint32_t function;
    uint64_t last;
    uint32_t samples;
    size_t slice;
  };
  const uint64_t period = s.period_ns;
  for (uint32_t t = 0; t < per_track.size(); ++t) {
    std::vector<std::pair<uint64_t, uint32_t>>& samples = per_track[t];
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Open> open;
    // Ends every open slice from `depth` up: one period after its last sample, but never past
    // `cut` (the sample that ended it) or the range.
    const auto close_from = [&](size_t depth, uint64_t cut) {
      while (open.size() > depth) {
        const Open& o = open.back();
        PythonSlice& slice = set.slices[o.slice];
        slice.end = std::max(o.last, std::min({o.last + period, cut, to_ns}));
        slice.samples = o.samples;
        open.pop_back();
      }
    };
    for (const auto& [ts, stack] : samples) {
      const std::vector<uint32_t>& frames = s.stacks[stack];
      size_t same = 0;
      while (same < open.size() && same < frames.size() &&
             frames[same] < function_of_frame.size() &&
             open[same].function == function_of_frame[frames[same]]) {
        ++same;
      }
      close_from(same, ts);
      for (size_t d = 0; d < same; ++d) {
        open[d].last = ts;
        ++open[d].samples;
      }
      for (size_t d = same; d < frames.size(); ++d) {
        if (frames[d] >= function_of_frame.size()) break;
        const uint32_t function = function_of_frame[frames[d]];
        const uint32_t id = static_cast<uint32_t>(set.slices.size() + 1);
        const uint32_t parent = d == 0 ? 0 : set.slices[open[d - 1].slice].id;
        set.slices.push_back({ts, ts, t, static_cast<uint32_t>(d), function, 1, id, parent});
        open.push_back({function, ts, 1, set.slices.size() - 1});
      }
    }
    close_from(0, UINT64_MAX);
  }
  return set;
}

}  // namespace gprof
