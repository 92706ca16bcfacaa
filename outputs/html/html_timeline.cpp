// The HTML report's timeline (html_report_model.h): busy time per track per bin, the exact union
// of each track's records. Launcher process only. Two counting-sort passes over the records (no
// comparison sort over all events), so that a 10 M-event profile's timeline costs a fraction of a
// second.
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

}  // namespace

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

void Timeline::SetSpan(uint64_t start, uint64_t end, size_t max_bins) {
  start_ns = start;
  end_ns = std::max(start, end);
  const uint64_t span = end_ns - start_ns;
  bin_ns = span == 0 ? 0 : (span + max_bins - 1) / max_bins;
  bins = span == 0 ? 0 : static_cast<size_t>((span + bin_ns - 1) / bin_ns);
}

}  // namespace gprof::html_internal
