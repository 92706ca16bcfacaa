// Unit tests for the per-thread host buffers: concurrent appends with a visitor running, exact
// drop counting when the arena is full, whole in-order records, reset, cut at a timestamp, bytes
// per API/NVTX record. Each test runs in a fresh process (InitThreadBuffers is once per process,
// and the tests need arenas of their own sizes) and appends from fresh threads.
#include "collector/host/thread_buffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "collector/host/api_records.h"
#include "collector/host/host_clock.h"
#include "collector/host/nvtx_records.h"
#include "tests/support/fresh_process.h"

namespace gprof::collector {
namespace {

struct Rec {
  uint32_t writer;
  uint32_t seq;
  uint32_t len;  // bytes of filler that follow, each == (seq & 0xff)
};

struct Seen {
  std::map<uint32_t, std::vector<uint32_t>> seqs_by_writer;
  std::map<uint32_t, uint32_t> tid_of_writer;
  uint64_t corrupt = 0;
  uint64_t total = 0;
};

void Collect(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags, const void* payload,
             uint32_t size) {
  auto* seen = static_cast<Seen*>(ctx);
  ++seen->total;
  Rec r;
  if (type != HostRecordType::kNvtxMark || size < sizeof r) {
    ++seen->corrupt;
    return;
  }
  std::memcpy(&r, payload, sizeof r);
  if (flags != static_cast<uint8_t>(r.seq * 7)) ++seen->corrupt;
  const auto* filler = static_cast<const unsigned char*>(payload) + sizeof r;
  bool ok = size == sizeof r + r.len;
  for (uint32_t i = 0; ok && i < r.len; ++i) ok = filler[i] == (r.seq & 0xff);
  if (!ok) ++seen->corrupt;
  seen->seqs_by_writer[r.writer].push_back(r.seq);
  auto [it, inserted] = seen->tid_of_writer.emplace(r.writer, tid);
  if (!inserted && it->second != tid) ++seen->corrupt;
}

bool AppendRec(uint32_t writer, uint32_t seq) {
  Rec r{writer, seq, seq % 97};
  unsigned char filler[97];
  std::memset(filler, static_cast<int>(seq & 0xff), sizeof filler);
  return AppendHostRecord(HostRecordType::kNvtxMark, static_cast<uint8_t>(seq * 7), &r, sizeof r,
                          filler, r.len);
}

TEST(ThreadBuffer, ConcurrentWritersWhileVisitingGiveWholeOrderedRecords) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(64ull << 20));
    constexpr uint32_t kWriters = 8;
    constexpr uint32_t kPerWriter = 20000;
    std::atomic<bool> done{false};
    std::atomic<uint64_t> visits{0};
    std::thread visitor([&] {
      while (!done.load()) {
        Seen seen;
        VisitHostRecords(&Collect, &seen);
        EXPECT_EQ(seen.corrupt, 0u);
        for (auto& [w, seqs] : seen.seqs_by_writer) {
          for (size_t i = 0; i < seqs.size(); ++i) {
            ASSERT_EQ(seqs[i], i) << "writer " << w;  // a prefix, in order, no gaps
          }
        }
        visits.fetch_add(1);
      }
    });
    std::vector<std::thread> writers;
    for (uint32_t w = 0; w < kWriters; ++w) {
      writers.emplace_back([w] {
        for (uint32_t i = 0; i < kPerWriter; ++i) ASSERT_TRUE(AppendRec(w, i));
      });
    }
    for (auto& t : writers) t.join();
    done.store(true);
    visitor.join();
    EXPECT_GT(visits.load(), 0u);

    Seen seen;
    VisitHostRecords(&Collect, &seen);
    EXPECT_EQ(seen.corrupt, 0u);
    EXPECT_EQ(seen.total, uint64_t{kWriters} * kPerWriter);
    ASSERT_EQ(seen.seqs_by_writer.size(), kWriters);
    for (auto& [w, seqs] : seen.seqs_by_writer) {
      ASSERT_EQ(seqs.size(), kPerWriter);
      for (uint32_t i = 0; i < kPerWriter; ++i) ASSERT_EQ(seqs[i], i);
    }
    EXPECT_EQ(HostRecordsDropped(), 0u);
  });
}

TEST(ThreadBuffer, ArenaExhaustionCountsEveryDropExactly) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(4 * 64 * 1024));  // four chunks
    constexpr uint32_t kWriters = 3;
    constexpr uint32_t kPerWriter = 10000;  // far more than four chunks hold
    std::atomic<uint64_t> accepted{0}, refused{0};
    std::vector<std::thread> writers;
    for (uint32_t w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (uint32_t i = 0; i < kPerWriter; ++i) (AppendRec(w, i) ? accepted : refused)++;
      });
    }
    for (auto& t : writers) t.join();
    EXPECT_GT(accepted.load(), 0u);
    EXPECT_GT(refused.load(), 0u);
    EXPECT_EQ(HostRecordsDropped(), refused.load());
    Seen seen;
    VisitHostRecords(&Collect, &seen);
    EXPECT_EQ(seen.corrupt, 0u);
    EXPECT_EQ(seen.total, accepted.load());
  });
}

TEST(ThreadBuffer, OversizedPayloadIsDroppedAndCounted) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(1 << 20));
    std::thread([] {
      std::vector<char> big(kMaxHostPayload + 1, 'x');
      EXPECT_FALSE(AppendHostRecord(HostRecordType::kNvtxMark, 0, big.data(),
                                    static_cast<uint32_t>(big.size())));
      EXPECT_TRUE(AppendHostRecord(HostRecordType::kNvtxMark, 0, big.data(), kMaxHostPayload));
    }).join();
    EXPECT_EQ(HostRecordsDropped(), 1u);
    std::pair<uint64_t, uint32_t> count_and_size{0, 0};
    VisitHostRecords(
        [](void* ctx, uint32_t, HostRecordType, uint8_t, const void*, uint32_t s) {
          auto* p = static_cast<std::pair<uint64_t, uint32_t>*>(ctx);
          ++p->first;
          p->second = s;
        },
        &count_and_size);
    EXPECT_EQ(count_and_size.first, 1u);
    EXPECT_EQ(count_and_size.second, kMaxHostPayload);
  });
}

TEST(ThreadBuffer, RecordsCarryTheWritersTid) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(1 << 20));
    uint32_t writer_tid = 0;
    std::thread([&] {
      writer_tid = CurrentTid();
      ASSERT_TRUE(AppendRec(7, 0));
    }).join();
    Seen seen;
    VisitHostRecords(&Collect, &seen);
    ASSERT_EQ(seen.tid_of_writer.count(7), 1u);
    EXPECT_EQ(seen.tid_of_writer[7], writer_tid);
    EXPECT_NE(writer_tid, CurrentTid());
  });
}

TEST(ThreadBuffer, ResetForgetsPublishedRecordsAndRecyclesChunks) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(8 * 64 * 1024));  // eight chunks
    // One writer thread that stays alive across resets and fills several chunks each round.
    std::atomic<int> round{0};
    std::atomic<int> finished_round{-1};
    std::atomic<uint64_t> refused{0};
    std::thread writer([&] {
      for (int r = 0; r < 10; ++r) {
        while (round.load() != r) std::this_thread::yield();
        for (uint32_t i = 0; i < 3000; ++i) {  // ~3 chunks of records per round
          if (!AppendRec(static_cast<uint32_t>(r), i)) refused++;
        }
        finished_round.store(r);
      }
    });
    for (int r = 0; r < 10; ++r) {
      round.store(r);
      while (finished_round.load() != r) std::this_thread::yield();
      Seen seen;
      VisitHostRecords(&Collect, &seen);
      EXPECT_EQ(seen.corrupt, 0u);
      // Only this round's records: the previous rounds were reset.
      ASSERT_EQ(seen.seqs_by_writer.size(), 1u) << "round " << r;
      EXPECT_EQ(seen.seqs_by_writer.begin()->first, static_cast<uint32_t>(r));
      EXPECT_EQ(seen.total, 3000u);
      ResetHostRecords();
      Seen after;
      VisitHostRecords(&Collect, &after);
      EXPECT_EQ(after.total, 0u);
    }
    writer.join();
    // 10 rounds x ~3 chunks would need ~30 chunks without recycling; the arena has 8.
    EXPECT_EQ(refused.load(), 0u);
    EXPECT_EQ(HostRecordsDropped(), 0u);
  });
}

TEST(ThreadBuffer, ResetBeforeATimestampKeepsLaterRecordsOfEachThread) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(8 * 64 * 1024));
    // Two threads appending API records (as the CUPTI callback does) stamped with host clock ticks
    // t(i) = base + i * kStep: thread A i = 0..4999, thread B i = 1000..5999, enough to span chunks.
    // The cut is given in CLOCK_REALTIME ns, as the window thread gives it.
    constexpr uint64_t kStep = 1000;
    const uint64_t base = HostTicks();
    auto ticks = [&](uint64_t i) { return base + i * kStep; };
    auto writer = [&](uint64_t first) {
      for (uint64_t i = first; i < first + 5000; ++i) {
        ASSERT_TRUE(AppendApiRecord(ticks(i), ticks(i) + 10, static_cast<uint32_t>(i), 505,
                                    ApiDomain::kRuntime, 0));
      }
    };
    std::thread a(writer, 0), b(writer, 1000);
    a.join();
    b.join();
    ResetHostRecordsBefore(HostTicksToNs(ticks(3000)));
    std::map<uint32_t, std::vector<uint32_t>> by_tid;  // correlation ids = i
    VisitHostRecords(
        [](void* ctx, uint32_t tid, HostRecordType type, uint8_t, const void* payload,
           uint32_t size) {
          ApiHostRecord r;
          ASSERT_EQ(type, HostRecordType::kApiCall);
          ASSERT_TRUE(ReadApiRecord(payload, size, &r));
          (*static_cast<std::map<uint32_t, std::vector<uint32_t>>*>(ctx))[tid].push_back(
              r.correlation_id);
        },
        &by_tid);
    ASSERT_EQ(by_tid.size(), 2u);
    std::vector<std::vector<uint32_t>> kept;
    for (auto& [tid, ids] : by_tid) kept.push_back(ids);
    std::sort(kept.begin(), kept.end(), [](auto& x, auto& y) { return x.back() < y.back(); });
    ASSERT_EQ(kept[0].size(), 2000u);  // 3000..4999
    EXPECT_EQ(kept[0].front(), 3000u);
    ASSERT_EQ(kept[1].size(), 3000u);  // 3000..5999
    EXPECT_EQ(kept[1].front(), 3000u);
    EXPECT_EQ(kept[1].back(), 5999u);
  });
}

// The per-event memory targets (bench figure 5): an API call costs 32 bytes of buffer, an NVTX pop
// 16, a push with a 7-byte name 24. One 64 KiB chunk (64 bytes of it chunk header) holds exactly
// that many records before the arena is full.
// One fresh process per record type: each fills one 64 KiB chunk (64 bytes of header).
constexpr uint32_t kUsable = 64 * 1024 - 64;

template <typename Append>
uint64_t FillOneChunk(Append append) {
  uint64_t accepted = 0;
  std::thread([&] {
    while (append()) ++accepted;
  }).join();
  return accepted;
}

TEST(ThreadBuffer, RecordSizesPerEvent) {
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(64 * 1024));
    EXPECT_EQ(FillOneChunk([] { return AppendApiRecord(1, 2, 3, 505, ApiDomain::kRuntime, 0); }),
              kUsable / 32);
  });
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(64 * 1024));
    EXPECT_EQ(FillOneChunk([] { return AppendNvtxEnd<HostRecordType::kNvtxPop>(0, 1, 0); }),
              kUsable / 16);
  });
  gprof::testing::InFreshProcess([&] {
    ASSERT_TRUE(InitThreadBuffers(64 * 1024));
    EXPECT_EQ(FillOneChunk([] {
                NvtxBeginFields f;
                f.ts = 1;
                f.encoding = NvtxNameEncoding::kUtf8;
                return AppendNvtxBegin(HostRecordType::kNvtxPush, f, "forward", 7);
              }),
              kUsable / 24);
  });
}

}  // namespace
}  // namespace gprof::collector
