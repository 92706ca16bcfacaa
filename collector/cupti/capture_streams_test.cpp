// Which calls the API callback takes as queued into a capturing stream, and which copies as moving
// nothing: CaptureStreams fed the calls a program makes, and ReadCallFacts fed the parameter
// structs CUDA passes to the callback (generated_cuda_runtime_api_meta.h, generated_cuda_meta.h).
// Expected values follow the CUDA documentation cited in capture_streams.h and call_params.h.
#include "collector/cupti/capture_streams.h"

#include <gtest/gtest.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <thread>

#include "collector/cupti/call_params.h"

namespace gprof::collector {
namespace {

cudaStream_t Stream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id); }

uintptr_t LaunchStream(cudaStream_t stream, bool ptsz = false) {
  cudaLaunchKernel_v7000_params p{};
  p.stream = stream;
  const CallFacts f = ReadCallFacts(
      true,
      ptsz ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000
           : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
      &p);
  EXPECT_EQ(f.op, StreamOp::kWork);
  return f.stream;
}

// Relaxed mode: thread A captures stream s; thread B's launch into s is captured (it makes no
// record), A's launch into the non-capturing stream t runs. The thread does not matter.
TEST(CaptureStreams, WorkIsCapturedByItsStreamWhicheverThreadQueuesIt) {
  static CaptureStreams captures;
  const uintptr_t s = LaunchStream(Stream(0x5000));
  const uintptr_t t = LaunchStream(Stream(0x6000));
  EXPECT_FALSE(captures.AnyOpen());
  captures.Begin(s);
  bool other_thread_captured = false;
  std::thread([&] { other_thread_captured = captures.Captured(LaunchStream(Stream(0x5000))); })
      .join();
  EXPECT_TRUE(other_thread_captured);
  EXPECT_TRUE(captures.Captured(s));
  EXPECT_FALSE(captures.Captured(t));
  captures.End(s);
  EXPECT_FALSE(captures.Captured(s));
  EXPECT_FALSE(captures.AnyOpen());
}

// Fork and join (CUDA Programming Guide, "Cross-stream Dependencies and Events"): t waits on an
// event recorded in capturing s and joins the capture until s's EndCapture; an event recorded
// again outside the capture joins no one.
TEST(CaptureStreams, AStreamWaitingOnACapturedEventJoinsTheCaptureUntilItEnds) {
  static CaptureStreams captures;
  const uintptr_t s = 0x5000, t = 0x6000, u = 0x7000, e = 0xe000;
  captures.Begin(s);
  captures.Record(e, s);
  captures.Wait(t, e);
  EXPECT_TRUE(captures.Captured(t));
  captures.Record(e, u);  // re-recorded outside the capture
  captures.Wait(u, e);
  EXPECT_FALSE(captures.Captured(u));
  captures.End(s);
  EXPECT_FALSE(captures.Captured(s));
  EXPECT_FALSE(captures.Captured(t));
  EXPECT_FALSE(captures.AnyOpen());
}

// The default streams: 0 in a plain call and cudaStreamLegacy are the one legacy stream; 0 in a
// _ptsz call and cudaStreamPerThread are the calling thread's own stream, another thread's is not.
TEST(CallFacts, DefaultStreamsAreLegacyOrTheCallingThreadsOwn) {
  EXPECT_EQ(LaunchStream(nullptr), LaunchStream(cudaStreamLegacy));
  const uintptr_t mine = LaunchStream(cudaStreamPerThread);
  EXPECT_EQ(LaunchStream(nullptr, /*ptsz=*/true), mine);
  EXPECT_NE(mine, LaunchStream(nullptr));
  uintptr_t theirs = 0;
  std::thread([&] { theirs = LaunchStream(cudaStreamPerThread); }).join();
  EXPECT_NE(theirs, mine);
  EXPECT_EQ(LaunchStream(Stream(0x5000), true), 0x5000u);
}

TEST(CallFacts, EmptyAndHostToHostCopiesAndEmptyMemsetsMoveNothingOnTheGpu) {
  char a[8], b[8];
  auto copy = [&](size_t count, cudaMemcpyKind kind) {
    cudaMemcpyAsync_v3020_params p{a, b, count, kind, Stream(0x5000)};
    return ReadCallFacts(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
  };
  EXPECT_TRUE(copy(0, cudaMemcpyHostToDevice).no_gpu_work);
  EXPECT_TRUE(copy(8, cudaMemcpyHostToHost).no_gpu_work);
  EXPECT_FALSE(copy(8, cudaMemcpyHostToDevice).no_gpu_work);
  EXPECT_FALSE(copy(8, cudaMemcpyDefault).no_gpu_work);  // may be host to host: not told apart
  EXPECT_EQ(copy(8, cudaMemcpyHostToDevice).stream, 0x5000u);
  cudaMemcpy_v3020_params sync{a, b, 0, cudaMemcpyDeviceToHost};
  EXPECT_TRUE(ReadCallFacts(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &sync).no_gpu_work);
  cudaMemset_v3020_params memset{a, 0, 0};
  EXPECT_TRUE(ReadCallFacts(true, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, &memset).no_gpu_work);
  cuMemsetD32Async_params d32{0, 0, 4, nullptr};
  EXPECT_FALSE(ReadCallFacts(false, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &d32).no_gpu_work);
  cuMemcpyHtoD_v2_params htod{0, b, 0};
  EXPECT_TRUE(ReadCallFacts(false, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &htod).no_gpu_work);
}

TEST(CallFacts, CaptureEventAndWaitCallsAreFollowedWhateverTheFilter) {
  cudaStreamWaitEvent_v3020_params wait{Stream(0x6000), reinterpret_cast<cudaEvent_t>(0xe000), 0};
  const CallFacts f =
      ReadCallFacts(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait);
  EXPECT_EQ(f.op, StreamOp::kWaitEvent);
  EXPECT_EQ(f.stream, 0x6000u);
  EXPECT_EQ(f.event, 0xe000u);
  EXPECT_TRUE(FollowsCaptureStreams(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000));
  EXPECT_TRUE(FollowsCaptureStreams(true, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020));
  EXPECT_TRUE(FollowsCaptureStreams(false, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent));
  EXPECT_FALSE(FollowsCaptureStreams(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_FALSE(FollowsCaptureStreams(true, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
}

}  // namespace
}  // namespace gprof::collector
