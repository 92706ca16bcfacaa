// Activity-buffer pool: the cap, refusals, completion order, reuse and zeroing.
#include "collector/cupti/activity_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace gprof::collector {
namespace {

TEST(ActivityPool, HandsOutAtMostCapacityAndCountsRefusals) {
  ActivityBufferPool pool;
  pool.Init(64 * 1024, 3);
  std::set<uint8_t*> buffers;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    buffers.insert(b);
  }
  EXPECT_EQ(buffers.size(), 3u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.allocated(), 3u);
}

// GPROF_PENDING_MIB: a cap of 4 buffers' bytes (256 KiB of 64 KiB buffers) in a pool of 100.
// Held buffers (lent or completed, not released) and decoded bytes waiting count together; a
// release or a drain (decoded bytes back to 0) makes room again. Derived by hand from the sizes.
TEST(ActivityPool, PendingByteCapCountsHeldBuffersAndDecodedBytesTogether) {
  constexpr size_t kBuf = 64 * 1024;
  ActivityBufferPool pool;
  pool.Init(kBuf, 100, 4 * kBuf);
  std::vector<uint8_t*> held;
  for (int i = 0; i < 4; ++i) held.push_back(pool.Acquire());
  for (uint8_t* b : held) ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);  // a fifth would pass the cap
  EXPECT_EQ(pool.refused_pending(), 1u);
  pool.Complete(held[0], 10);          // completed, not yet released: still held
  EXPECT_EQ(pool.Acquire(), nullptr);
  pool.Release(held[0], 10);
  pool.SetDecodedBytes(kBuf / 2);      // its records, decoded, wait for a drain
  EXPECT_EQ(pool.Acquire(), nullptr);  // 3 held + half a buffer decoded + 1 > 4
  pool.SetDecodedBytes(0);             // drained
  EXPECT_NE(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.held(), 4u);
  EXPECT_EQ(pool.refused(), 3u);
  EXPECT_EQ(pool.refused_pending(), 3u);
}

// A cap smaller than one buffer still lends one when nothing is held or waiting.
TEST(ActivityPool, PendingCapBelowOneBufferStillLendsOne) {
  ActivityBufferPool pool;
  pool.Init(64 * 1024, 10, 1024);
  EXPECT_NE(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
}

TEST(ActivityPool, CompletedBuffersComeBackInOrderAndAreReusedZeroed) {
  ActivityBufferPool pool;
  pool.Init(4096, 2);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  a[0] = 0x11;
  b[0] = 0x22;
  pool.Complete(b, 100);
  pool.Complete(a, 200);
  EXPECT_EQ(pool.completed(), 2u);
  std::vector<ActivityBufferPool::Completed> done;
  pool.TakeCompleted(&done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].buffer, b);
  EXPECT_EQ(done[0].valid_size, 100u);
  EXPECT_EQ(done[1].buffer, a);
  for (const auto& c : done) pool.Release(c.buffer, c.valid_size);
  uint8_t* again = pool.Acquire();
  ASSERT_TRUE(again == a || again == b);
  EXPECT_EQ(again[0], 0);  // zeroed for CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER
  EXPECT_EQ(pool.allocated(), 2u);  // reused, not grown
  EXPECT_EQ(pool.refused(), 0u);
}

TEST(ActivityPool, IgnoresForeignPointers) {
  ActivityBufferPool pool;
  pool.Init(4096, 2);
  uint8_t* a = pool.Acquire();
  pool.Complete(a + 8, 10);
  pool.Complete(nullptr, 10);
  std::vector<ActivityBufferPool::Completed> done;
  pool.TakeCompleted(&done);
  EXPECT_TRUE(done.empty());
}

TEST(ActivityPool, ConcurrentProducersAndOneConsumerLoseNothing) {
  ActivityBufferPool pool;
  pool.Init(4096, 8);
  constexpr int kPerThread = 2000;
  std::atomic<uint64_t> handed_out{0};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> consumed{0};
  std::thread consumer([&] {
    std::vector<ActivityBufferPool::Completed> work;
    while (true) {
      uint32_t gen = pool.generation();
      work.clear();
      pool.TakeCompleted(&work);
      for (const auto& c : work) {
        pool.Release(c.buffer, c.valid_size);
        consumed.fetch_add(1);
      }
      if (work.empty()) {
        if (done.load() && consumed.load() == handed_out.load()) return;
        pool.WaitForWork(gen);
      }
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        uint8_t* b = pool.Acquire();
        if (b == nullptr) continue;
        handed_out.fetch_add(1);
        pool.Complete(b, 64);
      }
    });
  }
  for (auto& p : producers) p.join();
  done.store(true);
  pool.Wake();
  consumer.join();
  EXPECT_EQ(consumed.load(), handed_out.load());
  EXPECT_EQ(handed_out.load() + pool.refused(), 4u * kPerThread);
  EXPECT_LE(pool.allocated(), 8u);
}

}  // namespace
}  // namespace gprof::collector
