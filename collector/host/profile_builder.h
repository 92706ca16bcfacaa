// Turns the host records of one window (thread_buffer.h) into Profile ranges, marks, API calls,
// steps, threads and domains. Pairing happens here, off the hot path: push/pop per (thread,
// domain) stack, start/end by range id across threads. A pop/end with nothing open is counted
// (nvtx_unmatched_pops); a range still open at the end is closed at `end_ns` and flagged
// kRangeOpenAtEnd (nvtx_ranges_open_at_end).
//
// Threads: cold only (exit, window end). Allocates freely.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/host/nvtx_records.h"
#include "collector/host/nvtx_registry.h"
#include "collector/host/thread_buffer.h"
#include "model/profile.h"

namespace gprof::collector {

// Ranges open across a window's start edge. A schedule window's records begin at its start
// (ResetHostRecordsBefore forgot the earlier ones), so a range that opened before the window and
// closes inside it reaches the window's build as a pop or end with nothing open. That is a range
// cut by the window's edge, not a pop the program made with nothing pushed: this keeps, from the
// records the resets forgot (their `dropped` visitor), how many pushes per (thread, domain) and
// which start ids had not closed yet, and a window's build counts in nvtx_unmatched_pops only the
// pops and ends beyond those. Window thread only, serialized with the builds (flush_mutex).
class OpenAtWindowStart {
 public:
  static void Visit(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                    const void* payload, uint32_t size);
  // Pushes on `key` (tid << 16 | the record's domain index) still open at the last cut.
  uint64_t OpenPushes(uint64_t key) const {
    auto it = pushes_.find(key);
    return it == pushes_.end() ? 0 : it->second;
  }
  bool StartOpen(uint64_t id) const { return starts_.count(id) != 0; }

 private:
  std::unordered_map<uint64_t, uint64_t> pushes_;
  std::unordered_set<uint64_t> starts_;
  std::unordered_set<uint64_t> ends_first_;  // ends forgotten before their start (another slot)
};

// The process's one (never destroyed: the collector's state outlives atexit).
OpenAtWindowStart& WindowStartCarry();

class ProfileBuilder {
 public:
  // `registry` gives names to domains and registered strings; `profile` receives the records
  // (its strings, domains and threads are filled here).
  ProfileBuilder(const NvtxRegistrySnapshot& registry, Profile* profile);

  // One host record, in each thread's append order (VisitHostRecords order).
  // Timestamps are converted from host clock ticks to CLOCK_REALTIME ns (host_clock.h) here.
  void Add(uint32_t tid, HostRecordType type, uint8_t flags, const void* payload, uint32_t size);
  // Closes what is still open at `end_ns`, sorts ranges/marks by start, fills threads and
  // counters. Call once.
  void Finish(uint64_t end_ns);
  // A segment's end (HostSegments): like Finish, but what is open stays open for the next
  // segment's records.
  void Seal();
  // The index of stack `pcs` in the profile's stack table, added when new (--cpu-sampling's
  // samples share the table with the API calls' stacks).
  uint32_t InternStack(const uint64_t* pcs, uint32_t depth);
  // The registry for the next records (a segment takes a fresh snapshot); it must outlive them.
  void SetRegistry(const NvtxRegistrySnapshot& registry) { registry_ = &registry; }
  // A window's build: pops and ends of ranges opened before the window are not counted.
  void SetOpenAtStart(const OpenAtWindowStart* open) { open_at_start_ = open; }

  // Adapter for VisitHostRecords: `ctx` is a ProfileBuilder*.
  static void Visit(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                    const void* payload, uint32_t size);

 private:
  // An open range: everything of its HostRange but the end.
  using Open = HostRange;
  StringId NameOf(NvtxNameEncoding encoding, uint32_t registered, const char* bytes, uint32_t len);
  // A range about to open: its name, split into torch's parts when it is a torch op (kRangeTorch).
  Open OpenRange(const NvtxBeginFields& f, uint32_t tid, const char* name, uint32_t name_len);
  uint16_t Domain(uint16_t index);
  void NoteThread(uint32_t tid);
  void MatchEnds(bool final);
  void FillTables();

  const NvtxRegistrySnapshot* registry_;
  Profile* profile_;
  const OpenAtWindowStart* open_at_start_ = nullptr;
  std::unordered_map<uint64_t, uint64_t> pops_past_start_;  // per key: pops excused so far
  std::unordered_map<uint64_t, std::vector<Open>> stacks_;  // key: tid << 16 | domain
  std::unordered_map<uint64_t, Open> started_;              // start/end by range id
  struct PendingEnd {
    uint64_t id;
    uint64_t ts_ns;
    bool carried = false;  // already waited one segment for its start
  };
  std::vector<PendingEnd> ends_;  // matched in Finish: an end may be visited before its start
  std::vector<uint32_t> tids_;
  std::unordered_map<std::string, uint32_t> stack_ids_;  // PC bytes -> index in profile->stacks
};

// The host part of a whole run written in segments (collector/lifecycle/spill.h): one builder
// for the run, so a range open at a segment's end closes in a later one (and is written there),
// and string, domain and stack ids stay those of the run's profile `run`. Each Build consumes
// the records published so far (ConsumeHostRecords) into `run`, which the caller empties of
// records after writing each segment; `last` closes what is still open at `end_ns`. Callers
// must not overlap (flush_mutex), and nothing else may visit or reset the host records.
class HostSegments {
 public:
  explicit HostSegments(Profile* run);
  void Build(bool last, uint64_t end_ns);

 private:
  Profile* run_;
  NvtxRegistrySnapshot registry_;
  ProfileBuilder builder_;
};

// Builds the host part of a profile from everything recorded since the last ResetHostRecords.
// counters.host_events_dropped gets the host records dropped since the previous call (not the
// running total), so each window dump counts its own losses. A window's build passes
// `open_at_start` (WindowStartCarry()). Callers must not overlap (the runtime holds its
// flush_mutex).
void BuildHostProfile(Profile* profile, uint64_t end_ns,
                      const OpenAtWindowStart* open_at_start = nullptr);

}  // namespace gprof::collector
