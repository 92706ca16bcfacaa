// The HTML report's model (html_report_model.h): timeline bins, step bars, kernel distributions
// and memory series of one profile. Launcher process only. This is the page's only work that
// grows with the event count: a few linear passes over the records and two counting-sort passes
// for the timeline (no comparison sort over all events), so that a 10 M-event profile's page
// costs a fraction of a second beyond what the table and findings computed.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/names.h"
#include "analysis/tables/stats.h"
#include "outputs/html/html_report_model.h"

namespace gprof::html_internal {
namespace {

uint64_t Dur(uint64_t s, uint64_t e) { return e > s ? e - s : 0; }

// ---- Timeline: busy time per track per bin, the exact union of each track's records ----

struct TrackKey {
  TimelineTrack::Kind kind;
  uint32_t device, id;
  bool operator<(const TrackKey& o) const {
    return std::tie(kind, device, id) < std::tie(o.kind, o.device, o.id);
  }
  bool operator==(const TrackKey& o) const {
    return kind == o.kind && device == o.device && id == o.id;
  }
};

// Every record that makes a track busy: host ranges (not steps) and CUDA calls on their thread,
// kernels, copies and memsets on their stream. Calls f(key, start, end) in one fixed order, so
// two passes see the same records in the same order.
// `host` / `gpu` false: leave those records out (a pass that needs only the others).
template <typename F>
void ForEachBusy(const Profile& p, F&& f, bool host = true, bool gpu = true) {
  using K = TimelineTrack::Kind;
  if (host) {
    for (const HostRange& r : p.ranges) {
      if (!IsStepRange(p, r)) f(TrackKey{K::kHost, 0, r.tid}, r.start_ns, r.end_ns);
    }
    for (const ApiCall& c : p.api_calls) f(TrackKey{K::kHost, 0, c.tid}, c.start_ns, c.end_ns);
  }
  if (!gpu) return;
  for (const Kernel& k : p.kernels) {
    f(TrackKey{K::kStream, KernelDeviceId(p, k), k.stream_id}, k.start_ns, k.end_ns);
  }
  for (const Memcpy& m : p.memcpys) {
    f(TrackKey{K::kStream, m.device_id, m.stream_id}, m.start_ns, m.end_ns);
  }
  for (const Memset& m : p.memsets) {
    f(TrackKey{K::kStream, m.device_id, m.stream_id}, m.start_ns, m.end_ns);
  }
}

struct Span {
  uint64_t s, e;
};

// Adds [s, e) (inside the timeline) to `bins`.
void AddCoverage(const Timeline& tl, uint64_t s, uint64_t e, std::vector<uint64_t>* bins) {
  for (size_t b = tl.BinOf(s); s < e && b < tl.bins; ++b) {
    const uint64_t until = std::min(e, tl.BinEnd(b));
    if (until > s) (*bins)[b] += until - s;
    s = until;
  }
}

// Adds [s, e), the next span in start order, to the union whose end so far is `cursor`.
void Sweep(const Timeline& tl, uint64_t s, uint64_t e, uint64_t* cursor,
           std::vector<uint64_t>* bins) {
  if (e <= *cursor) return;
  AddCoverage(tl, std::max(s, *cursor), e, bins);
  *cursor = e;
}

// The same for [first, last), sorted by start.
void Sweep(const Timeline& tl, const Span* first, const Span* last, uint64_t* cursor,
           std::vector<uint64_t>* bins) {
  for (const Span* sp = first; sp != last; ++sp) Sweep(tl, sp->s, sp->e, cursor, bins);
}

// At most this many rows are binned (each holds kTimelineBins counters); a profile with more
// threads and streams than that leaves the rest out of the timeline.
constexpr uint32_t kMaxTimelineKeys = 4096;

std::string HostLabel(const Profile& p, uint32_t tid) {
  std::string label = "thread " + std::to_string(tid);
  std::string_view name;
  for (const ThreadInfo& t : p.threads) {
    if (t.tid == tid && t.name != kNoString) name = p.strings.Get(t.name);
  }
  if (!name.empty()) {
    label += " (" + std::string(name) + ")";
  } else if (tid == p.info.pid) {
    label += " (main)";
  }
  return label;
}

void BuildTimeline(const HtmlReportInput& in, Timeline* tl) {
  const Profile& p = *in.profile;
  const FindingsContext& ctx = *in.context;
  tl->SetSpan(ctx.window_start_ns, ctx.window_end_ns, kTimelineBins);
  if (tl->bins == 0) return;
  const size_t nb = tl->bins;

  // Pass 1: each record's row, swept at once into the row's columns while the row's records
  // come in start order (a thread's calls, a stream's work, a one-stream GPU: the usual case, and
  // then nothing is stored); and how many records start in each (row, column) bucket, for pass 2.
  std::map<TrackKey, uint32_t> slot_of;
  // Records of a few threads and streams interleave: a small direct-mapped cache in front of the
  // map keeps the lookup off most records.
  struct CacheEntry {
    TrackKey key;
    uint32_t slot = UINT32_MAX;
  };
  std::array<CacheEntry, 64> cache{};
  TrackKey last{};
  uint32_t last_slot = UINT32_MAX;
  // A row (or a GPU's all-streams row) swept as its records come, until one comes out of order.
  struct Sweeper {
    uint64_t last_start = 0, cursor = 0;
    bool ordered = true;
    std::vector<uint64_t> bins;
  };
  std::vector<TrackKey> keys;
  std::vector<Sweeper> rows;
  std::vector<uint32_t> device_of_slot;       // index into device_rows, or UINT32_MAX (host)
  std::map<uint32_t, uint32_t> device_index;  // device id -> index into device_rows
  std::vector<Sweeper> device_rows;
  std::vector<uint32_t> device_ids;
  std::vector<uint64_t> counts;  // per (slot, bin): records starting there
  const auto take = [&](Sweeper* w, uint64_t s, uint64_t e) {
    if (!w->ordered) return;
    if (s < w->last_start) {
      w->ordered = false;  // swept again from its buckets in pass 2
      return;
    }
    w->last_start = s;
    Sweep(*tl, s, e, &w->cursor, &w->bins);
  };
  const auto slot_for = [&](const TrackKey& key) -> uint32_t {
    if (last_slot != UINT32_MAX && key == last) return last_slot;
    CacheEntry& c =
        cache[(key.id * 31u + key.device * 7u + static_cast<uint32_t>(key.kind)) % cache.size()];
    if (c.slot == UINT32_MAX || !(c.key == key)) {
      auto it = slot_of.find(key);
      if (it == slot_of.end()) {
        if (keys.size() == kMaxTimelineKeys) return UINT32_MAX;
        it = slot_of.emplace(key, static_cast<uint32_t>(keys.size())).first;
        keys.push_back(key);
        rows.push_back({0, tl->start_ns, true, std::vector<uint64_t>(nb, 0)});
        counts.resize(keys.size() * nb, 0);
        uint32_t dev = UINT32_MAX;
        if (key.kind == TimelineTrack::Kind::kStream) {
          auto [d, added] =
              device_index.try_emplace(key.device, static_cast<uint32_t>(device_rows.size()));
          if (added) {
            device_rows.push_back({0, tl->start_ns, true, std::vector<uint64_t>(nb, 0)});
            device_ids.push_back(key.device);
          }
          dev = d->second;
        }
        device_of_slot.push_back(dev);
      }
      c = {key, it->second};
    }
    last = key;
    last_slot = c.slot;
    return c.slot;
  };
  ForEachBusy(p, [&](const TrackKey& key, uint64_t s, uint64_t e) {
    s = std::max(s, tl->start_ns);
    e = std::min(e, tl->end_ns);
    if (e <= s) return;
    const uint32_t slot = slot_for(key);
    if (slot == UINT32_MAX) return;
    ++counts[slot * nb + tl->BinOf(s)];
    take(&rows[slot], s, e);
    if (device_of_slot[slot] != UINT32_MAX) take(&device_rows[device_of_slot[slot]], s, e);
  });

  // Pass 2, only for rows whose records came out of order (nested ranges, which end in order
  // but start out of it; GPUs whose streams interleave): their records into (row, column)
  // buckets by a counting sort, each bucket sorted (small), then swept in column order.
  std::vector<bool> redo(keys.size(), false);
  bool redo_host = false, redo_gpu = false;
  for (uint32_t t = 0; t < keys.size(); ++t) {
    const uint32_t dev = device_of_slot[t];
    redo[t] = !rows[t].ordered || (dev != UINT32_MAX && !device_rows[dev].ordered);
    (keys[t].kind == TimelineTrack::Kind::kHost ? redo_host : redo_gpu) |= redo[t];
  }
  const bool any = redo_host || redo_gpu;
  std::vector<uint64_t> offsets;   // per (slot, bin) of the redone slots; others empty
  std::unique_ptr<Span[]> spans;   // filled below, every element once: not zeroed first
  if (any) {
    offsets.assign(keys.size() * nb + 1, 0);
    for (size_t i = 0; i < counts.size(); ++i) {
      offsets[i + 1] = offsets[i] + (redo[i / nb] ? counts[i] : 0);
    }
    spans.reset(new Span[offsets.back()]);
    std::vector<uint64_t> next(offsets.begin(), offsets.end() - 1);
    last_slot = UINT32_MAX;
    cache = {};
    ForEachBusy(p, [&](const TrackKey& key, uint64_t s, uint64_t e) {
      s = std::max(s, tl->start_ns);
      e = std::min(e, tl->end_ns);
      if (e <= s) return;
      const uint32_t slot = slot_for(key);  // every key is known now: no new slot
      if (slot == UINT32_MAX || !redo[slot]) return;
      spans[next[slot * nb + tl->BinOf(s)]++] = {s, e};
    }, redo_host, redo_gpu);
  }
  const auto bucket = [&](size_t t, size_t b) {
    return std::pair{spans.get() + offsets[t * nb + b], spans.get() + offsets[t * nb + b + 1]};
  };
  const auto by_start = [](const Span& a, const Span& b) { return a.s < b.s; };
  std::vector<TimelineTrack> tracks(keys.size());
  for (uint32_t t = 0; t < keys.size(); ++t) {
    TimelineTrack& tr = tracks[t];
    tr.kind = keys[t].kind;
    tr.device = keys[t].device;
    tr.id = keys[t].id;
    for (size_t b = 0; b < nb; ++b) tr.events += counts[t * nb + b];
    if (rows[t].ordered) {
      tr.bins = std::move(rows[t].bins);
      continue;
    }
    tr.bins.assign(nb, 0);
    uint64_t cursor = tl->start_ns;
    for (size_t b = 0; b < nb; ++b) {
      const auto [first, last_span] = bucket(t, b);
      if (!std::is_sorted(first, last_span, by_start)) std::sort(first, last_span, by_start);
      Sweep(*tl, first, last_span, &cursor, &tr.bins);
    }
  }
  std::vector<TimelineTrack> devices;
  for (uint32_t d = 0; d < device_rows.size(); ++d) {
    TimelineTrack dev;
    dev.kind = TimelineTrack::Kind::kDevice;
    dev.device = device_ids[d];
    // Each member stream's spans, contiguous and in start order by now (its buckets are in
    // column order, each sorted; an ordered stream's came sorted).
    struct Run {
      const Span* at;
      const Span* end;
    };
    std::vector<Run> runs;
    for (uint32_t t = 0; t < keys.size(); ++t) {
      if (device_of_slot[t] != d) continue;
      dev.events += tracks[t].events;
      if (!device_rows[d].ordered) {
        runs.push_back({spans.get() + offsets[t * nb], spans.get() + offsets[(t + 1) * nb]});
      }
    }
    if (device_rows[d].ordered) {
      dev.bins = std::move(device_rows[d].bins);
    } else {
      // A k-way merge of the streams straight into the sweep: k is a few streams per GPU.
      dev.bins.assign(nb, 0);
      uint64_t cursor = tl->start_ns;
      const auto later = [](const Run& a, const Run& b) { return a.at->s > b.at->s; };
      std::vector<Run> heap;
      for (const Run& r : runs) {
        if (r.at != r.end) heap.push_back(r);
      }
      std::make_heap(heap.begin(), heap.end(), later);
      while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        Run& r = heap.back();
        Sweep(*tl, r.at->s, r.at->e, &cursor, &dev.bins);
        if (++r.at == r.end) {
          heap.pop_back();
        } else {
          std::push_heap(heap.begin(), heap.end(), later);
        }
      }
    }
    devices.push_back(std::move(dev));
  }
  spans.reset();
  for (TimelineTrack& tr : tracks) {
    for (uint64_t v : tr.bins) tr.busy_ns += v;
  }
  for (TimelineTrack& tr : devices) {
    for (uint64_t v : tr.bins) tr.busy_ns += v;
  }

  // Which tracks are shown: the busiest of each kind (ties: the earlier key), then in key order.
  const auto keep_busiest = [](std::vector<TimelineTrack>* v, size_t n, size_t* hidden,
                               uint64_t* hidden_busy) {
    std::vector<size_t> order(v->size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return (*v)[a].busy_ns > (*v)[b].busy_ns; });
    std::vector<bool> keep(v->size(), false);
    for (size_t i = 0; i < order.size(); ++i) {
      if (i < n) {
        keep[order[i]] = true;
      } else {
        ++*hidden;
        if (hidden_busy != nullptr) *hidden_busy += (*v)[order[i]].busy_ns;
      }
    }
    std::vector<TimelineTrack> kept;
    for (size_t i = 0; i < v->size(); ++i) {
      if (keep[i]) kept.push_back(std::move((*v)[i]));
    }
    *v = std::move(kept);
  };
  std::vector<TimelineTrack> host, streams;
  for (TimelineTrack& tr : tracks) {
    (tr.kind == TimelineTrack::Kind::kHost ? host : streams).push_back(std::move(tr));
  }
  keep_busiest(&host, kMaxHostTracks, &tl->hidden_host, &tl->hidden_host_busy_ns);
  keep_busiest(&streams, kMaxGpuTracks, &tl->hidden_streams, &tl->hidden_streams_busy_ns);
  keep_busiest(&devices, kMaxDeviceRows, &tl->hidden_devices, nullptr);
  std::stable_sort(devices.begin(), devices.end(),
                   [](const TimelineTrack& a, const TimelineTrack& b) { return a.device < b.device; });
  std::stable_sort(streams.begin(), streams.end(),
                   [](const TimelineTrack& a, const TimelineTrack& b) {
                     return std::tie(a.device, a.id) < std::tie(b.device, b.id);
                   });
  // The main thread first, then by tid.
  std::stable_sort(host.begin(), host.end(), [&](const TimelineTrack& a, const TimelineTrack& b) {
    const bool am = a.id == p.info.pid, bm = b.id == p.info.pid;
    if (am != bm) return am;
    return a.id < b.id;
  });
  for (TimelineTrack& tr : host) {
    tr.label = HostLabel(p, tr.id);
    tl->tracks.push_back(std::move(tr));
  }
  // Each device's row, then its streams; streams of a device whose row is hidden last.
  std::vector<bool> placed(streams.size(), false);
  const auto add_stream = [&](size_t i) {
    streams[i].label =
        "GPU " + std::to_string(streams[i].device) + " stream " + std::to_string(streams[i].id);
    tl->tracks.push_back(std::move(streams[i]));
    placed[i] = true;
  };
  for (TimelineTrack& dev : devices) {
    const uint32_t device = dev.device;
    dev.label = "GPU " + std::to_string(device) + " (all streams)";
    tl->tracks.push_back(std::move(dev));
    for (size_t i = 0; i < streams.size(); ++i) {
      if (!placed[i] && streams[i].device == device) add_stream(i);
    }
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    if (!placed[i]) add_stream(i);
  }

  // The gpu_idle findings' gaps, and the step boundaries when they are few enough to tell apart.
  for (const Finding& f : *in.findings) {
    if (f.id != "gpu_idle") continue;
    for (const Place& pl : f.places) {
      TimelineGap g;
      g.device = pl.device.value_or(0);
      g.start_ns = ctx.origin_ns + pl.ts_ns;
      g.dur_ns = pl.dur_ns;
      g.step = pl.step;
      g.context = pl.context;
      tl->gaps.push_back(std::move(g));
      if (tl->gaps.size() == kMaxDeviceRows * kMaxPlaces) break;
    }
  }
  if (ctx.steps.size() <= nb / 4) {
    for (const StepRow& s : ctx.steps) tl->step_starts.push_back(s.start_ns);
  }
}

// ---- Steps ----

void BuildSteps(const HtmlReportInput& in, StepsModel* m) {
  const std::vector<StepRow>& steps = in.context->steps;
  m->gpu = in.profile->HasGpuData();
  m->count = steps.size();
  if (steps.empty()) return;
  std::vector<uint64_t> walls;
  for (const StepRow& s : steps) {
    walls.push_back(s.wall_ns);
    m->total_wall_ns += s.wall_ns;
    m->total_gpu_busy_ns += s.gpu_busy_ns;
  }
  m->median_wall_ns = static_cast<uint64_t>(SummarizeSamples(&walls).median + 0.5);
  for (const Finding& f : *in.findings) {
    if (f.id != "cold_start") continue;
    if (const Evidence* e = f.Get("step")) m->cold_step = static_cast<uint32_t>(e->n);
  }
  const auto bar_of = [&](const StepRow& s) {
    StepBar b;
    b.first = b.last = b.number = s.number;
    b.wall_ns = s.wall_ns;
    b.gpu_busy_ns = s.gpu_busy_ns;
    b.cold = m->cold_step && *m->cold_step == s.number;
    b.outlier = static_cast<double>(s.wall_ns) >=
                    kStepOutlierFactor * static_cast<double>(m->median_wall_ns) &&
                s.wall_ns >= m->median_wall_ns + kStepOutlierMinExcessNs;
    return b;
  };
  m->steps_per_bar = (steps.size() + kMaxStepBars - 1) / kMaxStepBars;
  for (size_t i = 0; i < steps.size(); i += m->steps_per_bar) {
    StepBar group;
    for (size_t j = i; j < steps.size() && j < i + m->steps_per_bar; ++j) {
      const StepBar b = bar_of(steps[j]);
      m->outliers += b.outlier ? 1 : 0;
      if (j == i || b.wall_ns > group.wall_ns) {
        const bool cold = group.cold || b.cold, outlier = group.outlier || b.outlier;
        const uint32_t first = j == i ? b.first : group.first;
        group = b;
        group.cold = cold;
        group.outlier = outlier;
        group.first = first;
      } else {
        group.cold |= b.cold;
        group.outlier |= b.outlier;
      }
      group.last = b.number;
      group.steps = j - i + 1;
    }
    m->bars.push_back(group);
  }
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return steps[a].wall_ns > steps[b].wall_ns; });
  for (size_t i = 0; i < order.size() && i < kSlowStepsListed; ++i) {
    m->slowest.push_back(bar_of(steps[order[i]]));
  }
}

// ---- Kernels: the top kernels by GPU time and their duration distributions ----

void BuildKernels(const Profile& p, std::vector<KernelDistribution>* out) {
  if (p.kernels.empty()) return;
  // Per mangled name id, then per demangled name (the table's rows).
  std::vector<uint64_t> total_by_id(p.strings.size(), 0), count_by_id(p.strings.size(), 0);
  std::vector<uint8_t> seen(p.strings.size(), 0);
  for (const Kernel& k : p.kernels) {
    if (k.name >= total_by_id.size()) continue;  // CheckProfile rejects these
    total_by_id[k.name] += Dur(k.start_ns, k.end_ns);
    ++count_by_id[k.name];
    seen[k.name] = 1;
  }
  NameCache names(p);
  std::map<std::string, uint64_t> total_by_name;
  for (StringId id = 0; id < seen.size(); ++id) {
    if (seen[id]) total_by_name[names.KernelName(id)] += total_by_id[id];
  }
  std::vector<std::pair<std::string, uint64_t>> ranked(total_by_name.begin(), total_by_name.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (ranked.size() > kTopKernels) ranked.resize(kTopKernels);
  std::map<std::string, size_t> slot_of_name;
  for (size_t i = 0; i < ranked.size(); ++i) slot_of_name[ranked[i].first] = i;
  std::vector<int32_t> slot_of_id(seen.size(), -1);
  for (StringId id = 0; id < seen.size(); ++id) {
    if (!seen[id]) continue;
    auto it = slot_of_name.find(names.KernelName(id));
    if (it != slot_of_name.end()) slot_of_id[id] = static_cast<int32_t>(it->second);
  }
  std::vector<std::vector<uint64_t>> samples(ranked.size());
  {
    std::vector<uint64_t> sizes(ranked.size(), 0);
    for (StringId id = 0; id < slot_of_id.size(); ++id) {
      if (slot_of_id[id] >= 0) sizes[static_cast<size_t>(slot_of_id[id])] += count_by_id[id];
    }
    for (size_t i = 0; i < samples.size(); ++i) samples[i].reserve(sizes[i]);
  }
  for (const Kernel& k : p.kernels) {
    if (k.name >= slot_of_id.size() || slot_of_id[k.name] < 0) continue;
    samples[static_cast<size_t>(slot_of_id[k.name])].push_back(Dur(k.start_ns, k.end_ns));
  }
  for (size_t i = 0; i < ranked.size(); ++i) {
    std::vector<uint64_t>& v = samples[i];
    KernelDistribution d;
    d.name = ranked[i].first;
    d.total_ns = ranked[i].second;
    d.count = v.size();
    if (v.empty()) continue;
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    d.min_ns = *mn;
    d.max_ns = *mx;
    // p95 by nearest rank, as kernel_spread: the ceil(0.95 n)-th smallest.
    const size_t rank = (v.size() * 95 + 99) / 100;
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(rank - 1), v.end());
    d.p95_ns = v[rank - 1];
    // The median as SummarizeSamples: the middle value, or the mean of the two middle ones. It is
    // among the `rank` smallest, which the selection above put first.
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid),
                     v.begin() + static_cast<ptrdiff_t>(std::max(rank, mid + 1)));
    const uint64_t upper = v[mid];
    if (v.size() % 2 == 1) {
      d.median_ns = static_cast<double>(upper);
    } else {
      const uint64_t lower = *std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid));
      d.median_ns = static_cast<double>(lower) + static_cast<double>(upper - lower) / 2.0;
    }
    out->push_back(std::move(d));
  }
}

// ---- Memory in use per device (the trace's counter rule, TracePlan::PlanMemory) ----

void BuildMemory(const Profile& p, const Timeline& tl, Model* m) {
  if (p.memory_ops.empty()) return;
  std::map<uint32_t, std::vector<uint32_t>> by_device;
  for (uint32_t i = 0; i < p.memory_ops.size(); ++i) {
    by_device[p.memory_ops[i].device_id].push_back(i);
  }
  for (auto& [device, order] : by_device) {
    if (m->memory.size() == kMaxMemoryDevices) {
      ++m->memory_devices_hidden;
      continue;
    }
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return p.memory_ops[a].ts_ns < p.memory_ops[b].ts_ns;
    });
    MemorySeries s;
    s.device = device;
    s.ops = order.size();
    for (const DeviceInfo& d : p.devices) {
      if (d.id == device) s.device_total = d.total_global_mem;
    }
    // Bytes in use after each operation, in time order.
    std::vector<std::pair<uint64_t, uint64_t>> after;  // (ts, in use)
    after.reserve(order.size());
    std::unordered_map<uint64_t, uint64_t> live;  // address -> bytes
    uint64_t total = 0;
    for (uint32_t i : order) {
      const MemoryOp& op = p.memory_ops[i];
      if (op.op == MemoryOpKind::kAlloc) {
        total += op.bytes;
        live[op.address] = op.bytes;
      } else {
        uint64_t bytes = op.bytes;
        if (auto it = live.find(op.address); it != live.end()) {
          if (bytes == 0) bytes = it->second;
          live.erase(it);
        }
        total -= std::min(total, bytes);
      }
      if (total > s.peak) {
        s.peak = total;
        s.peak_ns = op.ts_ns;
      }
      after.emplace_back(op.ts_ns, total);
    }
    // Per bin the most in use: the level it starts with, and every level an operation in it set.
    size_t k = 0;
    while (k < after.size() && after[k].first < tl.start_ns) s.at_start = after[k++].second;
    s.bin_max.assign(tl.bins, 0);
    uint64_t level = s.at_start;
    for (size_t b = 0; b < tl.bins; ++b) {
      const uint64_t edge = tl.BinEnd(b);
      s.bin_max[b] = level;
      for (; k < after.size() && after[k].first < edge; ++k) {
        level = after[k].second;
        s.bin_max[b] = std::max(s.bin_max[b], level);
      }
    }
    m->memory.push_back(std::move(s));
  }
}

}  // namespace

void Timeline::SetSpan(uint64_t start, uint64_t end, size_t max_bins) {
  start_ns = start;
  end_ns = std::max(start, end);
  const uint64_t span = end_ns - start_ns;
  bin_ns = span == 0 ? 0 : (span + max_bins - 1) / max_bins;
  bins = span == 0 ? 0 : static_cast<size_t>((span + bin_ns - 1) / bin_ns);
}

Model BuildModel(const HtmlReportInput& in) {
  Model m;
  BuildTimeline(in, &m.timeline);
  BuildSteps(in, &m.steps);
  BuildKernels(*in.profile, &m.kernels);
  BuildMemory(*in.profile, m.timeline, &m);
  m.stacks = BuildStacksModel(*in.profile, in.python_samples, in.python_syncs, in.native_stacks);
  return m;
}

}  // namespace gprof::html_internal
