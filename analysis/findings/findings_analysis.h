// What the findings rules share (findings.cpp), computed once per profile: the window, each
// device's merged GPU work, the host events nested per thread, the blocking synchronizations, and
// the evidence helpers. Internal to the findings (and the distributed findings' survey of one
// profile, merge_findings.cpp, which takes its window from here); launcher process only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/attribution/correlation_index.h"
#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/intervals.h"
#include "analysis/attribution/names.h"
#include "analysis/findings/findings.h"
#include "analysis/tables/stats.h"
#include "analysis/timeline/trace_plan.h"
#include "model/api_name.h"
#include "text/format.h"

namespace gprof::findings_internal {

inline uint64_t Dur(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

inline double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// CUDA calls that block the calling host thread until GPU work has finished.
inline bool IsSyncApi(std::string_view base) {
  static constexpr std::string_view kSync[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
      "cudaThreadSynchronize", "cuCtxSynchronize",      "cuStreamSynchronize",
      "cuEventSynchronize"};
  return std::find(std::begin(kSync), std::end(kSync), base) != std::end(kSync);
}

// Copy calls without "Async": synchronous with respect to the host (CUDA runtime API,
// "API synchronization behavior"), except device-to-device and peer copies.
inline bool IsSyncCopyApi(std::string_view base) {
  return (base.starts_with("cudaMemcpy") || base.starts_with("cuMemcpy")) &&
         base.find("Async") == std::string_view::npos;
}

inline bool DeviceSideCopy(CopyKind k) { return k == CopyKind::kDtoD || k == CopyKind::kPtoP; }

inline std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", share * 100.0);
  return buf;
}

inline std::string Factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", f);
  return buf;
}

inline Evidence Count(std::string key, uint64_t n) {
  return {std::move(key), Evidence::Kind::kCount, n, 0, {}};
}
inline Evidence Bytes(std::string key, uint64_t n) {
  return {std::move(key), Evidence::Kind::kBytes, n, 0, {}};
}
inline Evidence Duration(std::string key, uint64_t ns) {
  return {std::move(key), Evidence::Kind::kDuration, ns, 0, {}};
}
inline Evidence Pct(std::string key, double share) {
  return {std::move(key), Evidence::Kind::kPercent, 0, share * 100.0, {}};
}
inline Evidence FactorOf(std::string key, double f) {
  return {std::move(key), Evidence::Kind::kFactor, 0, f, {}};
}
inline Evidence Text(std::string key, std::string text) {
  return {std::move(key), Evidence::Kind::kText, 0, 0, std::move(text)};
}

// A host event: a range (not a step) or a CUDA API call, nested per thread.
struct HostEvent {
  uint64_t start, end;
  uint32_t tid;
  bool api;
  uint32_t index;       // into Profile::ranges or Profile::api_calls
  int64_t parent = -1;  // enclosing event on the same thread
};

// Everything the rules share, computed once.
class Analysis {
 public:
  explicit Analysis(const Profile& p) : p_(p), names_(p), corr_(p) {
    StatsCollector stats;
    stats.Add(p);
    steps_ = stats.Steps();
    base_ = TraceOriginNs(p_);
    ComputeWindow();
    for (const Kernel& k : p.kernels) {
      device_work_[KernelDevice(k)].emplace_back(k.start_ns, k.end_ns);
    }
    for (const Memcpy& m : p.memcpys) device_work_[m.device_id].emplace_back(m.start_ns, m.end_ns);
    for (const Memset& m : p.memsets) device_work_[m.device_id].emplace_back(m.start_ns, m.end_ns);
    for (auto& [dev, work] : device_work_) work = MergeIntervals(std::move(work));
    BuildHostEvents();
  }

  const Profile& p() const { return p_; }
  NameCache& names() { return names_; }
  const CorrelationIndex& corr() const { return corr_; }
  uint64_t ws() const { return ws_; }
  uint64_t we() const { return we_; }
  uint64_t window() const { return we_ - ws_; }
  bool InWindow(uint64_t t) const { return t >= ws_ && t < we_; }
  const std::map<uint32_t, std::vector<Interval>>& device_work() const { return device_work_; }
  const std::vector<HostEvent>& host() const { return host_; }
  const std::vector<StepRow>& steps() const { return steps_; }
  int64_t ApiEvent(size_t api_index) const { return api_event_[api_index]; }

  uint32_t KernelDevice(const Kernel& k) const { return KernelDeviceId(p_, k); }
  // The innermost range enclosing host event `i` (an index into host()), or -1.
  int64_t InnermostRange(int64_t i) const {
    for (int64_t e = i < 0 ? -1 : host_[i].parent; e >= 0; e = host_[e].parent) {
      if (!host_[e].api) return e;
    }
    return -1;
  }

  uint64_t Rel(uint64_t abs) const { return abs > base_ ? abs - base_ : 0; }
  std::optional<uint32_t> StepAt(uint64_t abs) const {
    for (const StepRow& s : steps_) {
      if (abs >= s.start_ns && abs < s.start_ns + s.wall_ns) return s.number;
    }
    return std::nullopt;
  }
  Place PlaceAt(uint64_t start, uint64_t end) const {
    Place pl;
    pl.step = StepAt(start);
    pl.ts_ns = Rel(start);
    pl.dur_ns = Dur(start, end);
    return pl;
  }

  std::string EventName(const HostEvent& e) {
    if (e.api) return names_.ApiCallName(p_.api_calls[e.index]);
    return std::string(p_.strings.Get(p_.ranges[e.index].name));
  }
  // Names of the ranges enclosing host event `i`, innermost first, at most kMaxPlaces.
  std::vector<std::string> EnclosingRanges(int64_t i) {
    std::vector<std::string> out;
    for (int64_t e = i < 0 ? -1 : host_[i].parent; e >= 0 && out.size() < kMaxPlaces;
         e = host_[e].parent) {
      if (!host_[e].api) out.push_back(EventName(host_[e]));
    }
    return out;
  }

 private:
  void ComputeWindow() {
    uint64_t lo = UINT64_MAX, hi = 0;
    if (!steps_.empty()) {
      for (const StepRow& s : steps_) {
        lo = std::min(lo, s.start_ns);
        hi = std::max(hi, s.start_ns + s.wall_ns);
      }
    } else {
      const auto span = [&](uint64_t s, uint64_t e) {
        lo = std::min(lo, s);
        hi = std::max(hi, e);
      };
      for (const Kernel& k : p_.kernels) span(k.start_ns, k.end_ns);
      for (const Memcpy& m : p_.memcpys) span(m.start_ns, m.end_ns);
      for (const Memset& m : p_.memsets) span(m.start_ns, m.end_ns);
      corr_.ForEachLaunch([&](uint32_t api, std::span<const GpuRef>) {
        span(p_.api_calls[api].start_ns, p_.api_calls[api].end_ns);
      });
      if (lo == UINT64_MAX) {  // no GPU work: the collection span, else every host event
        if (p_.info.end_ns > p_.info.start_ns) {
          span(p_.info.start_ns, p_.info.end_ns);
        } else {
          for (const HostRange& r : p_.ranges) span(r.start_ns, r.end_ns);
          for (const ApiCall& c : p_.api_calls) span(c.start_ns, c.end_ns);
        }
      }
    }
    ws_ = lo == UINT64_MAX ? 0 : lo;
    we_ = std::max(ws_, hi);
  }

  void BuildHostEvents() {
    for (uint32_t i = 0; i < p_.ranges.size(); ++i) {
      const HostRange& r = p_.ranges[i];
      if (!IsStepRange(p_, r)) host_.push_back({r.start_ns, r.end_ns, r.tid, false, i});
    }
    for (uint32_t i = 0; i < p_.api_calls.size(); ++i) {
      const ApiCall& c = p_.api_calls[i];
      host_.push_back({c.start_ns, c.end_ns, c.tid, true, i});
    }
    // Per thread by start, the longer first, ranges before the calls they enclose.
    std::sort(host_.begin(), host_.end(), [](const HostEvent& a, const HostEvent& b) {
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end > b.end;
      if (a.api != b.api) return !a.api;
      return a.index < b.index;
    });
    api_event_.assign(p_.api_calls.size(), -1);
    std::vector<int64_t> open;
    for (size_t i = 0; i < host_.size(); ++i) {
      HostEvent& e = host_[i];
      if (i > 0 && host_[i - 1].tid != e.tid) open.clear();
      while (!open.empty() && host_[open.back()].end <= e.start) open.pop_back();
      // A start/end range may cross another: then it has no parent.
      if (!open.empty() && e.end <= host_[open.back()].end) e.parent = open.back();
      open.push_back(static_cast<int64_t>(i));
      if (e.api) api_event_[e.index] = static_cast<int64_t>(i);
    }
  }

  const Profile& p_;
  NameCache names_;
  CorrelationIndex corr_;
  std::vector<StepRow> steps_;
  uint64_t base_ = 0, ws_ = 0, we_ = 0;
  std::map<uint32_t, std::vector<Interval>> device_work_;  // merged, per device id
  std::vector<HostEvent> host_;
  std::vector<int64_t> api_event_;  // api call index -> host_ index
};

// The median as `gprof-run stats` computes it (SummarizeSamples), rounded to ns.
inline uint64_t Median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  return static_cast<uint64_t>(SummarizeSamples(&v).median + 0.5);
}

// ---- Blocking synchronizations (shared by sync and the host-busy share) ----

struct BlockingCall {
  uint64_t start, end;
  std::optional<uint32_t> tid;
  int64_t host_event = -1;  // -1 for a SYNCHRONIZATION record without its API call
  std::string name;
  bool copy = false;  // a synchronous copy rather than a synchronize call
};

inline std::vector<BlockingCall> BlockingCalls(Analysis& a) {
  const Profile& p = a.p();
  std::vector<BlockingCall> calls;
  std::set<uint32_t> correlations;
  for (size_t i = 0; i < p.api_calls.size(); ++i) {
    const ApiCall& c = p.api_calls[i];
    const std::string& name = a.names().ApiCallName(c);
    const std::string_view base = BaseApiName(name);
    bool sync = IsSyncApi(base);
    bool copy = false;
    if (!sync) {
      // A copy call is synchronous by its name (no "Async") or by CUPTI's record of the copy;
      // device-side copies never block the host.
      bool record_sync = false, device_side = false;
      for (const GpuRef& g : a.corr().Gpu(c.correlation_id)) {
        if (g.kind != GpuKind::kMemcpy) continue;
        const Memcpy& m = p.memcpys[g.index];
        record_sync |= m.is_async == 0;
        device_side |= DeviceSideCopy(m.kind);
      }
      copy = (IsSyncCopyApi(base) || record_sync) && !device_side;
    }
    if (!sync && !copy) continue;
    // Every blocking call's id, in the window or not: CUPTI stamps a SYNCHRONIZATION record with
    // its own clock, which may put it a little before its call, across the window's edge.
    if (c.correlation_id != 0) correlations.insert(c.correlation_id);
    if (a.InWindow(c.start_ns)) {
      calls.push_back({c.start_ns, c.end_ns, c.tid, a.ApiEvent(i), name, copy});
    }
  }
  // CUPTI's SYNCHRONIZATION records whose call was not recorded (an API filter): time only.
  for (const Sync& s : p.syncs) {
    if (s.kind == SyncKind::kStreamWaitEvent || !a.InWindow(s.start_ns)) continue;
    if (s.correlation_id != 0 && correlations.count(s.correlation_id)) continue;
    calls.push_back({s.start_ns, s.end_ns, std::nullopt, -1, std::string(SyncName(s.kind)), false});
  }
  return calls;
}

}  // namespace gprof::findings_internal
