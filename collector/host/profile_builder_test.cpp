// Unit tests for ProfileBuilder: push/pop pairing per thread and domain, start/end across threads,
// unmatched pops, ranges open at the end, marks, registered strings, wide-char names, threads;
// and BuildHostProfile's per-profile count of dropped host records.
// Records are built in memory exactly as the NVTX hooks write them.
#include "collector/host/profile_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collector/host/api_records.h"
#include "collector/host/host_clock.h"
#include "collector/host/native_stack.h"
#include "collector/host/nvtx_records.h"
#include "collector/host/thread_buffer.h"
#include "support/clock.h"
#include "tests/support/fresh_process.h"

namespace gprof::collector {
namespace {

class Builder : public ::testing::Test {
 protected:
  // Feeds one record to the builder as VisitHostRecords hands it over (header split off).
  void Feed(uint32_t tid, const std::vector<char>& record) {
    HostRecordHeader h;
    std::memcpy(&h, record.data(), sizeof h);
    builder_.Add(tid, h.type, h.flags, record.data() + sizeof h, h.size);
  }
  void BeginRaw(HostRecordType type, uint32_t tid, const NvtxBeginFields& f, const void* name,
                uint32_t len) {
    std::vector<char> record(
        HostRecordBytes(NvtxBeginFixedPayload(type, f.category != 0, f.encoding) + len));
    WriteNvtxBegin(record.data(), type, f, name, len);
    Feed(tid, record);
  }
  // Test times are host clock ticks after `base_` (what the hooks store: T(x)); the builder gives
  // CLOCK_REALTIME ns, expected as Ns(x) (the one conversion, host_clock.h).
  uint64_t T(uint64_t x) const { return base_ + x; }
  uint64_t Ns(uint64_t x) const { return HostTicksToNs(T(x)); }
  void Begin(HostRecordType type, uint32_t tid, uint64_t ts, const std::string& name,
             uint16_t domain = 0, uint64_t id = 0, uint32_t category = 0) {
    NvtxBeginFields f;
    f.ts = T(ts);
    f.id = id;
    f.category = category;
    f.domain = domain;
    f.encoding = NvtxNameEncoding::kUtf8;
    BeginRaw(type, tid, f, name.data(), static_cast<uint32_t>(name.size()));
  }
  void Push(uint32_t tid, uint64_t ts, const std::string& name, uint16_t domain = 0) {
    Begin(HostRecordType::kNvtxPush, tid, ts, name, domain);
  }
  void End(HostRecordType type, uint32_t tid, uint64_t ts, uint16_t domain = 0, uint64_t id = 0) {
    std::vector<char> record(24);
    WriteNvtxEnd(record.data(), type, domain, T(ts), id);
    Feed(tid, record);
  }
  void Pop(uint32_t tid, uint64_t ts, uint16_t domain = 0) {
    End(HostRecordType::kNvtxPop, tid, ts, domain);
  }
  std::string Name(StringId id) const { return std::string(profile_.strings.Get(id)); }
  const HostRange* Find(const std::string& name) const {
    for (const HostRange& r : profile_.ranges) {
      if (Name(r.name) == name) return &r;
    }
    return nullptr;
  }

  const uint64_t base_ = HostTicks();
  NvtxRegistrySnapshot registry_{{"", "train-domain"}, {"", "registered step"}, {}, {{11, "loader"}}};
  Profile profile_;
  ProfileBuilder builder_{registry_, &profile_};
};

TEST_F(Builder, PushPopNestsPerThread) {
  Push(1, 100, "step");
  Push(1, 110, "forward");
  Push(2, 115, "load");  // another thread interleaved
  Pop(1, 150);           // forward
  Push(1, 160, "backward");
  Pop(2, 170);           // load
  Pop(1, 190);           // backward
  Pop(1, 200);           // step
  builder_.Finish(Ns(1000));

  ASSERT_EQ(profile_.ranges.size(), 4u);
  const HostRange* step = Find("step");
  const HostRange* fwd = Find("forward");
  const HostRange* bwd = Find("backward");
  const HostRange* load = Find("load");
  ASSERT_TRUE(step && fwd && bwd && load);
  EXPECT_EQ(step->start_ns, Ns(100));
  EXPECT_EQ(step->end_ns, Ns(200));
  EXPECT_EQ(fwd->start_ns, Ns(110));
  EXPECT_EQ(fwd->end_ns, Ns(150));
  EXPECT_EQ(bwd->start_ns, Ns(160));
  EXPECT_EQ(bwd->end_ns, Ns(190));
  EXPECT_EQ(load->tid, 2u);
  EXPECT_EQ(load->end_ns, Ns(170));
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(profile_.counters.nvtx_ranges_open_at_end, 0u);
  // Parents come before their children.
  EXPECT_EQ(Name(profile_.ranges[0].name), "step");
}

TEST_F(Builder, DomainsHaveTheirOwnStacks) {
  Push(1, 100, "outer", 0);
  Push(1, 110, "in-domain", 1);
  Pop(1, 120, 0);  // pops "outer", not the domain range
  Pop(1, 130, 1);
  builder_.Finish(Ns(1000));
  const HostRange* outer = Find("outer");
  const HostRange* inner = Find("in-domain");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(outer->end_ns, Ns(120));
  EXPECT_EQ(inner->end_ns, Ns(130));
  EXPECT_EQ(inner->domain, 1u);
  ASSERT_EQ(profile_.domains.size(), 2u);
  EXPECT_EQ(Name(profile_.domains[1]), "train-domain");
}

TEST_F(Builder, StartEndPairsAcrossThreadsWhateverTheVisitOrder) {
  End(HostRecordType::kNvtxEnd, 2, 500, 0, 42);  // visited first: thread 2's buffer
  Begin(HostRecordType::kNvtxStart, 1, 100, "async work", 0, 42);
  builder_.Finish(Ns(1000));
  ASSERT_EQ(profile_.ranges.size(), 1u);
  const HostRange& r = profile_.ranges[0];
  EXPECT_EQ(Name(r.name), "async work");
  EXPECT_EQ(r.start_ns, Ns(100));
  EXPECT_EQ(r.end_ns, Ns(500));
  EXPECT_EQ(r.tid, 1u);
  EXPECT_TRUE(r.flags & kRangeStartEnd);
  EXPECT_FALSE(r.flags & kRangeOpenAtEnd);
}

TEST_F(Builder, UnmatchedPopAndEndAreCountedNotRecorded) {
  Pop(1, 50);
  Push(1, 100, "a");
  Pop(1, 110);
  Pop(1, 120);
  End(HostRecordType::kNvtxEnd, 1, 130, 0, 999);
  builder_.Finish(Ns(1000));
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 3u);
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "a");
}

TEST_F(Builder, OpenRangesAreClosedAtTheEndAndFlagged) {
  Push(1, 100, "never popped");
  Push(1, 200, "inner also open");
  Begin(HostRecordType::kNvtxStart, 3, 300, "never ended", 0, 7);
  Push(2, 400, "closed");
  Pop(2, 450);
  builder_.Finish(Ns(1000));
  EXPECT_EQ(profile_.counters.nvtx_ranges_open_at_end, 3u);
  for (const char* name : {"never popped", "inner also open", "never ended"}) {
    const HostRange* r = Find(name);
    ASSERT_TRUE(r) << name;
    EXPECT_EQ(r->end_ns, Ns(1000)) << name;
    EXPECT_TRUE(r->flags & kRangeOpenAtEnd) << name;
  }
  EXPECT_TRUE(Find("never ended")->flags & kRangeStartEnd);
  EXPECT_FALSE(Find("closed")->flags & kRangeOpenAtEnd);
}

TEST_F(Builder, MarksKeepNameDomainAndCategory) {
  Begin(HostRecordType::kNvtxMark, 5, 300, "checkpoint", 1, 0, 9);
  builder_.Finish(Ns(1000));
  ASSERT_EQ(profile_.marks.size(), 1u);
  EXPECT_EQ(Name(profile_.marks[0].name), "checkpoint");
  EXPECT_EQ(profile_.marks[0].ts_ns, Ns(300));
  EXPECT_EQ(profile_.marks[0].tid, 5u);
  EXPECT_EQ(profile_.marks[0].domain, 1u);
  EXPECT_EQ(profile_.marks[0].category, 9u);
}

TEST_F(Builder, WideNamesBecomeUtf8) {
  const std::wstring wide = L"gr\u00fc\u00dfe \u6b65 \U0001F680";
  NvtxBeginFields f;
  f.ts = T(10);
  f.encoding = NvtxNameEncoding::kWide;
  BeginRaw(HostRecordType::kNvtxPush, 1, f, wide.data(),
           static_cast<uint32_t>(wide.size() * sizeof(wchar_t)));
  Pop(1, 20);
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "gr\xc3\xbc\xc3\x9f" "e \xe6\xad\xa5 \xf0\x9f\x9a\x80");
}

// nvtxRangePushW(L"") and nvtxMarkW(L""): a wide name of no units (or of less than one unit's
// bytes). The builder copied the 0 units with memcpy into an empty vector's data(), a null
// pointer: undefined behaviour that UBSan reports (scripts/sanitize fails on it; a plain build
// passes either way). Found by fuzz/nvtx_registry_fuzz.
TEST_F(Builder, EmptyWideNamesAreEmpty) {
  NvtxBeginFields f;
  f.ts = T(10);
  f.encoding = NvtxNameEncoding::kWide;
  BeginRaw(HostRecordType::kNvtxPush, 1, f, nullptr, 0);
  Pop(1, 20);
  f.ts = T(30);
  BeginRaw(HostRecordType::kNvtxMark, 1, f, "abc", 3);  // not even one wchar_t
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "");
  ASSERT_EQ(profile_.marks.size(), 1u);
  EXPECT_EQ(Name(profile_.marks[0].name), "");
}

TEST_F(Builder, RegisteredStringsResolveThroughTheRegistry) {
  NvtxBeginFields f;
  f.ts = T(10);
  f.encoding = NvtxNameEncoding::kRegistered;
  f.registered = 1;
  f.category = 5;
  BeginRaw(HostRecordType::kNvtxPush, 1, f, nullptr, 0);
  Pop(1, 20);
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "registered step");
  EXPECT_EQ(profile_.ranges[0].category, 5u);
}

TEST_F(Builder, UnnamedEventsHaveNoName) {
  NvtxBeginFields f;
  f.ts = T(10);
  f.encoding = NvtxNameEncoding::kNone;
  f.domain = 1;
  BeginRaw(HostRecordType::kNvtxMark, 2, f, nullptr, 0);
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.marks.size(), 1u);
  EXPECT_EQ(profile_.marks[0].name, kNoString);
  EXPECT_EQ(Name(profile_.domains[profile_.marks[0].domain]), "train-domain");
}

TEST_F(Builder, TruncatedNamesDoNotEndInAPartialUtf8Sequence) {
  Push(1, 10, std::string("ab\xe6\xad", 4));  // cut inside a 3-byte sequence
  Pop(1, 20);
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "ab");
}

TEST_F(Builder, ThreadsListRecordingAndNamedThreads) {
  Push(4, 10, "x");
  Pop(4, 20);
  builder_.Finish(Ns(100));
  ASSERT_EQ(profile_.threads.size(), 2u);  // tid 4 (recorded) and tid 11 (named "loader")
  EXPECT_EQ(profile_.threads[0].tid, 4u);
  EXPECT_EQ(profile_.threads[0].name, kNoString);
  EXPECT_EQ(profile_.threads[1].tid, 11u);
  EXPECT_EQ(Name(profile_.threads[1].name), "loader");
}

TEST_F(Builder, ApiRecordsBecomeApiCallsOfTheirThread) {
  // What the CUPTI callback appends: no tid in the record, the buffer's thread is the caller.
  ApiHostRecord r{};
  r.header = HostRecordHeader{kApiRecordPayload, HostRecordType::kApiCall, 0};
  r.correlation_id = 77;
  r.start = T(100);
  r.end = T(200);
  r.return_code = 2;
  r.cbid = 505;
  r.domain = ApiDomain::kRuntime;
  std::vector<char> record(sizeof r);
  std::memcpy(record.data(), &r, sizeof r);
  Feed(3, record);
  builder_.Finish(Ns(1000));
  ASSERT_EQ(profile_.api_calls.size(), 1u);
  const ApiCall& call = profile_.api_calls[0];
  EXPECT_EQ(call.correlation_id, 77u);
  EXPECT_EQ(call.cbid, 505u);
  EXPECT_EQ(call.domain, ApiDomain::kRuntime);
  EXPECT_EQ(call.tid, 3u);
  EXPECT_EQ(call.return_code, 2);
  EXPECT_EQ(call.start_ns, Ns(100));
  EXPECT_EQ(call.end_ns, Ns(200));
  ASSERT_EQ(profile_.threads.size(), 2u);  // tid 3 (recorded) and tid 11 (named)
  EXPECT_EQ(profile_.threads[0].tid, 3u);
}

// A kApiStack record as AppendApiStackRecord lays it out (native_stack.h).
std::vector<char> StackRecord(uint32_t correlation_id, std::vector<uint64_t> pcs) {
  const uint32_t payload =
      static_cast<uint32_t>(sizeof(ApiStackHeader) - sizeof(HostRecordHeader) + pcs.size() * 8);
  ApiStackHeader h{};
  h.header = HostRecordHeader{static_cast<uint16_t>(payload), HostRecordType::kApiStack, 0};
  h.correlation_id = correlation_id;
  h.start = 1;
  std::vector<char> record(HostRecordBytes(payload));
  std::memcpy(record.data(), &h, sizeof h);
  if (!pcs.empty()) std::memcpy(record.data() + sizeof h, pcs.data(), pcs.size() * 8);
  return record;
}

TEST_F(Builder, StackRecordsAreDeduplicatedAndReferencedByCorrelationId) {
  Feed(3, StackRecord(10, {0x1000, 0x2000, 0x3000}));
  Feed(3, StackRecord(11, {0x1000, 0x2000, 0x3000}));  // the same stack again
  Feed(4, StackRecord(12, {0x1000, 0x2000}));          // a prefix is another stack
  builder_.Finish(Ns(1000));
  ASSERT_EQ(profile_.stacks.size(), 2u);
  EXPECT_EQ(profile_.stack_pcs, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000, 0x1000, 0x2000}));
  EXPECT_EQ(profile_.stacks[0].first_pc, 0u);
  EXPECT_EQ(profile_.stacks[0].depth, 3u);
  EXPECT_EQ(profile_.stacks[1].first_pc, 3u);
  EXPECT_EQ(profile_.stacks[1].depth, 2u);
  ASSERT_EQ(profile_.api_stacks.size(), 3u);
  EXPECT_EQ(profile_.api_stacks[0].correlation_id, 10u);
  EXPECT_EQ(profile_.api_stacks[0].stack, 0u);
  EXPECT_EQ(profile_.api_stacks[1].stack, 0u);
  EXPECT_EQ(profile_.api_stacks[2].correlation_id, 12u);
  EXPECT_EQ(profile_.api_stacks[2].stack, 1u);
  EXPECT_EQ(CheckProfile(profile_), "");
}

TEST_F(Builder, MalformedStackRecordsAreIgnored) {
  std::vector<char> empty = StackRecord(10, {});
  Feed(3, empty);
  std::vector<uint64_t> deep(kMaxStackDepth + 1, 0x1000);
  Feed(3, StackRecord(11, deep));
  builder_.Finish(Ns(1000));
  EXPECT_TRUE(profile_.stacks.empty());
  EXPECT_TRUE(profile_.api_stacks.empty());
}

// The real capture on this thread: this test's own function is among the frames, innermost
// frames first (the caller's return address comes before main's).
volatile uint32_t g_after_capture = 0;
__attribute__((noinline)) uint32_t CaptureHere(uint64_t* pcs) {
  const uint32_t n = CaptureNativeStack(pcs, kMaxStackDepth, 0);
  g_after_capture = g_after_capture + 1;  // not a tail call: CaptureHere keeps its frame
  return n;
}

TEST(NativeStack, CaptureIsBoundedAndStartsAtTheCaller) {
  WarmNativeStack();
  uint64_t pcs[kMaxStackDepth] = {};
  const uint32_t n = CaptureHere(pcs);
  ASSERT_GE(n, 3u);
  ASSERT_LE(n, kMaxStackDepth);
  // pcs[0] is the return address inside CaptureHere (just after its call).
  const auto here = reinterpret_cast<uint64_t>(&CaptureHere);
  EXPECT_GT(pcs[0], here);
  EXPECT_LT(pcs[0], here + 256);
  uint64_t two[2] = {};
  EXPECT_EQ(CaptureNativeStack(two, 2, 0), 2u);
}

// Drops `n` host records on a fresh thread (payloads over kMaxHostPayload are refused and counted).
void DropHostRecords(int n) {
  std::thread([n] {
    std::vector<char> big(kMaxHostPayload + 1, 'x');
    for (int i = 0; i < n; ++i) {
      EXPECT_FALSE(AppendHostRecord(HostRecordType::kNvtxMark, 0, big.data(),
                                    static_cast<uint32_t>(big.size())));
    }
  }).join();
}

uint64_t DroppedInNextProfile() {
  Profile p;
  BuildHostProfile(&p, NowNs());
  return p.counters.host_events_dropped;
}

// Window dumps are summed by the launcher: each must count only the drops since the previous one.
TEST(BuildHostProfile, EachProfileCountsTheDropsSinceThePreviousOne) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(1 << 20));
    DroppedInNextProfile();  // whatever earlier tests left behind
    DropHostRecords(3);
    EXPECT_EQ(DroppedInNextProfile(), 3u);
    EXPECT_EQ(DroppedInNextProfile(), 0u);  // nothing new: no repeated report
    DropHostRecords(2);
    EXPECT_EQ(DroppedInNextProfile(), 2u);
    EXPECT_EQ(HostRecordsDropped(), 5u);  // the arena's running total is unchanged
  });
}

// torch's NVTX texts (torch 2.15, record_shapes on) become ranges named by the op, with the
// details in their own fields; a range that only looks similar keeps its text.
TEST_F(Builder, TorchOpTextsAreSplitIntoNameAndDetails) {
  Push(1, 100, "aten::linear, op_id = 14, sizes = [[2, 4], [3, 4], [3]], input_op_ids = "
               "[(9,0), (2,0), (5,0)]");
  Push(1, 110, "aten::mm, seq = 7, op_id = 15, sizes = [[2, 4], [4, 3]], input_op_ids = "
               "[(9,0), (15,0)]");
  Pop(1, 150);
  Pop(1, 160);
  Push(1, 200, "my_region, op_id = 12");
  Pop(1, 210);
  Push(1, 300, "load, sizes = [3]");
  Pop(1, 310);
  builder_.Finish(Ns(1000));

  ASSERT_EQ(profile_.ranges.size(), 4u);
  const HostRange* linear = Find("aten::linear");
  const HostRange* mm = Find("aten::mm");
  const HostRange* region = Find("my_region");
  const HostRange* load = Find("load, sizes = [3]");
  ASSERT_TRUE(linear && mm && region && load);
  EXPECT_EQ(linear->flags, kRangeTorch | kRangeCpuOp);
  EXPECT_EQ(linear->op_id, 14u);
  EXPECT_EQ(linear->seq, -1);
  EXPECT_EQ(Name(linear->shapes), "[[2, 4], [3, 4], [3]]");
  EXPECT_EQ(mm->seq, 7);
  EXPECT_EQ(mm->op_id, 15u);
  EXPECT_EQ(Name(mm->shapes), "[[2, 4], [4, 3]]");
  EXPECT_EQ(mm->start_ns, Ns(110));
  EXPECT_EQ(mm->end_ns, Ns(150));
  EXPECT_EQ(region->flags, kRangeTorch);  // a user annotation
  EXPECT_EQ(region->shapes, kNoString);
  EXPECT_EQ(load->flags, 0);
  EXPECT_EQ(load->op_id, 0u);
  EXPECT_EQ(load->seq, -1);
}

// A run written in segments (HostSegments drives Seal per segment, Finish at the end): a range
// open at a segment's end is not closed there; it closes in the segment where its pop comes, with
// its real end, and is written then. Hand-worked: "outer" pushed in segment 0 at 100, popped in
// segment 1 at 500; "inner" [120, 130] whole in segment 0; "late" open at the end, closed at 900.
TEST_F(Builder, ASealedSegmentKeepsOpenRangesOpenForTheNext) {
  Push(1, 100, "outer");
  Push(1, 120, "inner");
  Pop(1, 130);
  builder_.Seal();
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "inner");
  EXPECT_EQ(profile_.counters.nvtx_ranges_open_at_end, 0u);
  profile_.ranges.clear();  // written with segment 0

  Pop(1, 500);
  Push(1, 600, "late");
  builder_.Finish(Ns(900));
  ASSERT_EQ(profile_.ranges.size(), 2u);
  const HostRange* outer = Find("outer");
  const HostRange* late = Find("late");
  ASSERT_TRUE(outer && late);
  EXPECT_EQ(outer->start_ns, Ns(100));
  EXPECT_EQ(outer->end_ns, Ns(500));
  EXPECT_EQ(outer->flags & kRangeOpenAtEnd, 0);
  EXPECT_EQ(late->end_ns, Ns(900));
  EXPECT_NE(late->flags & kRangeOpenAtEnd, 0);
  EXPECT_EQ(profile_.counters.nvtx_ranges_open_at_end, 1u);
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 0u);
}

// An end consumed one segment before its start (the start's thread slot was read before the
// start was published, the end's after the end was) pairs up in the next segment; an end still
// alone after that is counted as unmatched. id 7: end in segment 0, start in segment 1; id 9: an
// end with no start ever, counted at the second seal.
TEST_F(Builder, AnEndSealedBeforeItsStartPairsInTheNextSegmentThenCounts) {
  End(HostRecordType::kNvtxEnd, 2, 300, 0, 7);
  End(HostRecordType::kNvtxEnd, 2, 310, 0, 9);
  builder_.Seal();
  EXPECT_TRUE(profile_.ranges.empty());
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 0u);
  Begin(HostRecordType::kNvtxStart, 1, 200, "async", 0, 7);
  builder_.Seal();
  ASSERT_EQ(profile_.ranges.size(), 1u);
  EXPECT_EQ(Name(profile_.ranges[0].name), "async");
  EXPECT_EQ(profile_.ranges[0].start_ns, Ns(200));
  EXPECT_EQ(profile_.ranges[0].end_ns, Ns(300));
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 1u);  // id 9, after waiting one segment
  builder_.Finish(Ns(1000));
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 1u);
}

// A window's records begin at its start; what the resets forgot before it went through
// OpenAtWindowStart. Forgotten: on thread 1 a push (torch's Optimizer.step, still open), a
// push/pop pair (closed), start id 5 (still open) and start/end id 6 (closed). In the window: the
// first pop on thread 1 closes the forgotten push (the window's edge cut that range: no loss), a
// second pop on thread 1 and one on thread 2 have nothing open anywhere, end id 5 closes the
// forgotten start, and ends 6 (closed before) and 8 (never started) have none: 4 unmatched.
TEST_F(Builder, PopsAndEndsOfRangesOpenedBeforeTheWindowAreNotUnmatched) {
  OpenAtWindowStart carry;
  auto forget = [&](uint32_t tid, auto&& write) {
    std::vector<char> record = write();
    HostRecordHeader h;
    std::memcpy(&h, record.data(), sizeof h);
    OpenAtWindowStart::Visit(&carry, tid, h.type, h.flags, record.data() + sizeof h, h.size);
  };
  auto begin = [&](HostRecordType type, uint64_t ts, uint64_t id) {
    return [=, this] {
      NvtxBeginFields f;
      f.ts = T(ts);
      f.id = id;
      f.encoding = NvtxNameEncoding::kUtf8;
      const std::string name = "forgotten";
      std::vector<char> record(
          HostRecordBytes(NvtxBeginFixedPayload(type, false, f.encoding) + name.size()));
      WriteNvtxBegin(record.data(), type, f, name.data(), static_cast<uint32_t>(name.size()));
      return record;
    };
  };
  auto end = [&](HostRecordType type, uint64_t ts, uint64_t id) {
    return [=, this] {
      std::vector<char> record(24);
      WriteNvtxEnd(record.data(), type, 0, T(ts), id);
      return record;
    };
  };
  forget(1, begin(HostRecordType::kNvtxPush, 100, 0));
  forget(1, begin(HostRecordType::kNvtxPush, 110, 0));
  forget(1, end(HostRecordType::kNvtxPop, 120, 0));
  forget(1, begin(HostRecordType::kNvtxStart, 130, 5));
  forget(1, begin(HostRecordType::kNvtxStart, 135, 6));
  forget(1, end(HostRecordType::kNvtxEnd, 140, 6));

  builder_.SetOpenAtStart(&carry);
  Pop(1, 300);
  Pop(2, 305);
  Pop(1, 310);
  End(HostRecordType::kNvtxEnd, 1, 320, 0, 5);
  End(HostRecordType::kNvtxEnd, 1, 330, 0, 6);
  End(HostRecordType::kNvtxEnd, 1, 340, 0, 8);
  builder_.Finish(Ns(1000));
  EXPECT_TRUE(profile_.ranges.empty());
  EXPECT_EQ(profile_.counters.nvtx_unmatched_pops, 4u);
  EXPECT_EQ(profile_.counters.nvtx_ranges_open_at_end, 0u);
}

}  // namespace
}  // namespace gprof::collector
