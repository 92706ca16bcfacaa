// ProfileBuilder (see profile_builder.h). Cold code: runs at exit or window end only, one build at
// a time (the runtime serializes them with its flush_mutex).
#include "collector/host/profile_builder.h"

#include "collector/host/host_cost.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "collector/host/api_records.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/host_clock.h"
#include "collector/host/native_stack.h"
#include "collector/host/nvtx_records.h"
#include "model/torch_op_name.h"

namespace gprof::collector {
namespace {

// Drops a trailing incomplete UTF-8 sequence left by truncating a long name.
std::string_view TrimPartialUtf8(std::string_view s) {
  size_t i = s.size();
  size_t back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return s;
  const unsigned char lead = static_cast<unsigned char>(s[i - 1]);
  size_t want = 1;
  if ((lead & 0xE0) == 0xC0) want = 2;
  else if ((lead & 0xF0) == 0xE0) want = 3;
  else if ((lead & 0xF8) == 0xF0) want = 4;
  if (lead >= 0x80 && back + 1 < want) return s.substr(0, i - 1);
  return s;
}

// HostRecordsDropped() at the end of the previous BuildHostProfile. Only touched there (one cold
// thread at a time); constant-initialized, never destroyed.
uint64_t g_dropped_reported = 0;
uint64_t g_stacks_captured_reported = 0;  // same for the stack counters
uint64_t g_stacks_dropped_reported = 0;

}  // namespace

ProfileBuilder::ProfileBuilder(const NvtxRegistrySnapshot& registry, Profile* profile)
    : registry_(&registry), profile_(profile) {
  if (profile_->domains.empty()) profile_->domains.push_back(kNoString);
}

uint16_t ProfileBuilder::Domain(uint16_t index) {
  // Profile::domains is indexed like the registry, so indices in records stay valid.
  if (index >= registry_->domains.size()) return 0;
  while (profile_->domains.size() <= index) {
    const size_t i = profile_->domains.size();
    profile_->domains.push_back(profile_->strings.Intern(registry_->domains[i]));
  }
  return index;
}

StringId ProfileBuilder::NameOf(NvtxNameEncoding encoding, uint32_t registered, const char* bytes,
                                uint32_t len) {
  switch (encoding) {
    case NvtxNameEncoding::kUtf8:
      return profile_->strings.Intern(TrimPartialUtf8(std::string_view(bytes, len)));
    case NvtxNameEncoding::kWide: {
      // An empty name (nvtxRangePushW(L"")) has no units, and an empty vector's data() may be
      // null: memcpy must not get it, even for 0 bytes.
      std::vector<wchar_t> wide(len / sizeof(wchar_t));
      if (!wide.empty()) std::memcpy(wide.data(), bytes, wide.size() * sizeof(wchar_t));
      return profile_->strings.Intern(WideToUtf8(wide.data(), wide.size()));
    }
    case NvtxNameEncoding::kRegistered:
      if (registered < registry_->strings.size()) {
        return profile_->strings.Intern(registry_->strings[registered]);
      }
      return kNoString;
    case NvtxNameEncoding::kNone:
      return kNoString;
  }
  return kNoString;
}

ProfileBuilder::Open ProfileBuilder::OpenRange(const NvtxBeginFields& f, uint32_t tid,
                                              const char* name, uint32_t name_len) {
  Open open{};
  open.start_ns = HostTicksToNs(f.ts);
  open.end_ns = open.start_ns;
  open.tid = tid;
  open.domain = Domain(f.domain);
  open.category = f.category;
  open.seq = -1;
  TorchOpName torch;
  if (f.encoding == NvtxNameEncoding::kUtf8 &&
      ParseTorchOpName(TrimPartialUtf8(std::string_view(name, name_len)), &torch)) {
    open.name = profile_->strings.Intern(torch.name);
    open.flags = static_cast<uint16_t>(kRangeTorch | (torch.cpu_op ? kRangeCpuOp : 0));
    open.op_id = torch.op_id;
    open.seq = torch.seq > INT32_MAX ? INT32_MAX : static_cast<int32_t>(torch.seq);
    open.shapes = torch.shapes.empty() ? kNoString : profile_->strings.Intern(torch.shapes);
  } else {
    open.name = NameOf(f.encoding, f.registered, name, name_len);
    if (f.torch_op) {  // through ITT: the op name alone
      open.flags = static_cast<uint16_t>(
          kRangeTorch | (IsTorchCpuOpName(profile_->strings.Get(open.name)) ? kRangeCpuOp : 0));
    }
  }
  return open;
}

void ProfileBuilder::NoteThread(uint32_t tid) {
  if (tids_.empty() || tids_.back() != tid) tids_.push_back(tid);
}

void ProfileBuilder::Add(uint32_t tid, HostRecordType type, uint8_t flags, const void* payload,
                         uint32_t size) {
  switch (type) {
    case HostRecordType::kNvtxPush:
    case HostRecordType::kNvtxStart:
    case HostRecordType::kNvtxMark: {
      NvtxBeginFields f;
      const char* name = nullptr;
      uint32_t name_len = 0;
      if (!ReadNvtxBegin(type, flags, payload, size, &f, &name, &name_len)) return;
      NoteThread(tid);
      if (type == HostRecordType::kNvtxMark) {
        profile_->marks.push_back(HostMark{HostTicksToNs(f.ts),
                                           NameOf(f.encoding, f.registered, name, name_len), tid,
                                           Domain(f.domain), 0, f.category});
        return;
      }
      const Open open = OpenRange(f, tid, name, name_len);
      if (type == HostRecordType::kNvtxPush) {
        stacks_[(static_cast<uint64_t>(tid) << 16) | open.domain].push_back(open);
      } else {
        started_[f.id] = open;
      }
      return;
    }
    case HostRecordType::kNvtxPop: {
      uint16_t domain = 0;
      uint64_t ts = 0, id = 0;
      if (!ReadNvtxEnd(type, payload, size, &domain, &ts, &id)) return;
      auto it = stacks_.find((static_cast<uint64_t>(tid) << 16) | Domain(domain));
      if (it == stacks_.end() || it->second.empty()) {
        const uint64_t key = (static_cast<uint64_t>(tid) << 16) | domain;
        if (open_at_start_ != nullptr &&
            pops_past_start_[key] < open_at_start_->OpenPushes(key)) {
          ++pops_past_start_[key];  // its push came before the window: cut by the edge
        } else {
          ++profile_->counters.nvtx_unmatched_pops;
        }
        return;
      }
      HostRange range = it->second.back();
      it->second.pop_back();
      range.end_ns = std::max(HostTicksToNs(ts), range.start_ns);
      profile_->ranges.push_back(range);
      return;
    }
    case HostRecordType::kNvtxEnd: {
      uint16_t domain = 0;
      uint64_t ts = 0, id = 0;
      if (!ReadNvtxEnd(type, payload, size, &domain, &ts, &id)) return;
      ends_.push_back(PendingEnd{id, HostTicksToNs(ts)});
      return;
    }
    case HostRecordType::kApiCall: {
      ApiHostRecord r;
      if (!ReadApiRecord(payload, size, &r)) return;
      NoteThread(tid);
      const uint64_t start_ns = HostTicksToNs(r.start);
      profile_->api_calls.push_back(ApiCall{start_ns, std::max(HostTicksToNs(r.end), start_ns),
                                            r.correlation_id, tid, r.cbid, r.domain,
                                            static_cast<uint8_t>(r.flags & (kApiCallCaptured |
                                                                            kApiCallNoGpuWork)),
                                            r.return_code});
      return;
    }
    case HostRecordType::kApiStack: {
      uint32_t correlation_id = 0, depth = 0;
      const uint64_t* pcs = nullptr;
      if (!ReadApiStackRecord(payload, size, &correlation_id, &pcs, &depth)) return;
      profile_->api_stacks.push_back(ApiStackRef{correlation_id, InternStack(pcs, depth)});
      return;
    }
    case HostRecordType::kThreadHandover:
      return;  // internal to the buffers: never visited
  }
}

void ProfileBuilder::Visit(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                           const void* payload, uint32_t size) {
  static_cast<ProfileBuilder*>(ctx)->Add(tid, type, flags, payload, size);
}

void ProfileBuilder::MatchEnds(bool final) {
  // An end visited before its start (another thread's slot, visited later) waits in `ends_`; in
  // a run built in segments it may meet its start one segment later (the start's slot was read
  // before the start was published, the end's after the end was), so an unmatched end is kept
  // for one more segment, then counted.
  std::vector<PendingEnd> kept;
  for (const PendingEnd& end : ends_) {
    auto it = started_.find(end.id);
    if (it == started_.end()) {
      if (open_at_start_ != nullptr && open_at_start_->StartOpen(end.id)) {
        continue;  // started before the window: cut by the edge
      }
      if (final || end.carried) {
        ++profile_->counters.nvtx_unmatched_pops;
      } else {
        kept.push_back(PendingEnd{end.id, end.ts_ns, true});
      }
      continue;
    }
    HostRange range = it->second;
    range.end_ns = std::max(end.ts_ns, range.start_ns);
    range.flags = static_cast<uint16_t>(range.flags | kRangeStartEnd);
    profile_->ranges.push_back(range);
    started_.erase(it);
  }
  ends_ = std::move(kept);
}

void ProfileBuilder::FillTables() {
  SortRangesAndMarks(profile_);
  // Every thread that recorded something, plus every named thread.
  std::vector<uint32_t> tids = tids_;
  for (const auto& [tid, name] : registry_->thread_names) tids.push_back(tid);
  for (const ThreadInfo& t : profile_->threads) tids.push_back(t.tid);
  std::sort(tids.begin(), tids.end());
  tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
  tids_ = tids;  // kept sorted and unique: a run built in segments does not grow it per segment
  profile_->threads.clear();
  for (uint32_t tid : tids) {
    auto it = registry_->thread_names.find(tid);
    profile_->threads.push_back(ThreadInfo{
        tid, it == registry_->thread_names.end() ? kNoString : profile_->strings.Intern(it->second)});
  }
  // All domains known so far, so that names survive even when a window saw no event in one.
  if (!registry_->domains.empty()) Domain(static_cast<uint16_t>(registry_->domains.size() - 1));
}

void ProfileBuilder::Seal() {
  MatchEnds(/*final=*/false);
  FillTables();
}

void ProfileBuilder::Finish(uint64_t end_ns) {
  MatchEnds(/*final=*/true);
  auto close_open = [&](const Open& open, uint16_t flags) {
    HostRange range = open;
    range.end_ns = std::max(end_ns, open.start_ns);
    range.flags = static_cast<uint16_t>(range.flags | flags | kRangeOpenAtEnd);
    profile_->ranges.push_back(range);
    ++profile_->counters.nvtx_ranges_open_at_end;
  };
  for (auto& [key, stack] : stacks_) {
    for (const Open& open : stack) close_open(open, 0);
  }
  for (auto& [id, open] : started_) close_open(open, kRangeStartEnd);
  stacks_.clear();
  started_.clear();
  ends_.clear();
  FillTables();
}

uint32_t ProfileBuilder::InternStack(const uint64_t* pcs, uint32_t depth) {
  std::string key(reinterpret_cast<const char*>(pcs), depth * sizeof(uint64_t));
  auto [it, fresh] =
      stack_ids_.emplace(std::move(key), static_cast<uint32_t>(profile_->stacks.size()));
  if (fresh) {
    profile_->stacks.push_back(
        NativeStack{static_cast<uint32_t>(profile_->stack_pcs.size()), depth});
    const size_t at = profile_->stack_pcs.size();
    profile_->stack_pcs.resize(at + depth);
    std::memcpy(profile_->stack_pcs.data() + at, pcs, depth * sizeof(uint64_t));
  }
  return it->second;
}

namespace {

// The deltas every host profile carries since the previous one (each dump or segment counts its
// own): the collector's own cost, stack counters, host drops. BuildHostProfile and HostSegments
// are serialized (runtime's flush_mutex), so the reported totals live here.
void TakeHostDeltas(Profile* profile) {
  TakeHostCost(&profile->collector_cost);
  const uint64_t captured = g_api_stacks_captured.load(std::memory_order_relaxed);
  const uint64_t stacks_dropped = g_api_stacks_dropped.load(std::memory_order_relaxed);
  profile->stack_counters.captured = captured - g_stacks_captured_reported;
  profile->stack_counters.dropped = stacks_dropped - g_stacks_dropped_reported;
  g_stacks_captured_reported = captured;
  g_stacks_dropped_reported = stacks_dropped;
  const uint64_t total = HostRecordsDropped();
  profile->counters.host_events_dropped = total - g_dropped_reported;
  g_dropped_reported = total;
}

}  // namespace

OpenAtWindowStart& WindowStartCarry() {
  static auto* carry = new OpenAtWindowStart;  // leaked on purpose: used until the last flush
  return *carry;
}

void OpenAtWindowStart::Visit(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                              const void* payload, uint32_t size) {
  auto* self = static_cast<OpenAtWindowStart*>(ctx);
  if (type == HostRecordType::kNvtxPush || type == HostRecordType::kNvtxStart) {
    NvtxBeginFields f;
    const char* name = nullptr;
    uint32_t name_len = 0;
    if (!ReadNvtxBegin(type, flags, payload, size, &f, &name, &name_len)) return;
    if (type == HostRecordType::kNvtxPush) {
      ++self->pushes_[(static_cast<uint64_t>(tid) << 16) | f.domain];
    } else if (self->ends_first_.erase(f.id) == 0) {
      self->starts_.insert(f.id);
    }
  } else if (type == HostRecordType::kNvtxPop || type == HostRecordType::kNvtxEnd) {
    uint16_t domain = 0;
    uint64_t ts = 0, id = 0;
    if (!ReadNvtxEnd(type, payload, size, &domain, &ts, &id)) return;
    if (type == HostRecordType::kNvtxPop) {
      auto it = self->pushes_.find((static_cast<uint64_t>(tid) << 16) | domain);
      if (it != self->pushes_.end() && it->second > 0) --it->second;
    } else if (self->starts_.erase(id) == 0) {
      self->ends_first_.insert(id);
    }
  }
}

void BuildHostProfile(Profile* profile, uint64_t end_ns, const OpenAtWindowStart* open_at_start) {
  // A fresh calibration pair per build: the host clock map stays close to CLOCK_REALTIME from
  // here on even if the program stamps nothing for a long time.
  CalibrateHostClock();
  const NvtxRegistrySnapshot registry = SnapshotNvtxRegistry();
  ProfileBuilder builder(registry, profile);
  builder.SetOpenAtStart(open_at_start);
  VisitHostRecords(&ProfileBuilder::Visit, &builder);
  builder.Finish(end_ns);
  TakeHostDeltas(profile);
  TakeCpuSamples(profile, [&](const uint64_t* pcs, uint32_t depth) {
    return builder.InternStack(pcs, depth);
  });
  // The module map is taken only when there are stacks to place (dl_iterate_phdr: cold, but
  // not free).
  if (!profile->stacks.empty()) CollectModules(profile);
}

HostSegments::HostSegments(Profile* run)
    : run_(run), builder_(registry_, run) {}

void HostSegments::Build(bool last, uint64_t end_ns) {
  CalibrateHostClock();
  registry_ = SnapshotNvtxRegistry();
  ConsumeHostRecords(&ProfileBuilder::Visit, &builder_);
  if (last) {
    builder_.Finish(end_ns);
  } else {
    builder_.Seal();
  }
  TakeHostDeltas(run_);
  TakeCpuSamples(run_, [this](const uint64_t* pcs, uint32_t depth) {
    return builder_.InternStack(pcs, depth);
  });
  if (!run_->stacks.empty()) {
    run_->modules.clear();  // the map now (a segment lists the modules loaded at its end)
    CollectModules(run_);
  }
}

}  // namespace gprof::collector
