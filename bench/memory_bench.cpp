// Figure 5: resident bytes the collector keeps per event, measured as the growth of this process's
// resident set (/proc/self/statm) while events are stored the way the collector stores them:
//   API call  - one kApiCall record in the calling thread's buffer (collector/host/api_records.h)
//   NVTX pair - a push record (inline name "forward") and a pop record, appended with the same
//               functions the NVTX hooks use (collector/host/nvtx_records.h); reported per event
//   kernel    - decoded from CUpti_ActivityKernel10 records into a GpuBatch
//               (collector/cupti/activity_decoder.h), where kernels wait until the drain at
//               window end / exit
// CUPTI's own activity buffers are a fixed pool (GPROF_ACTIVITY_* config), not per event.
// 5a-5c are the best case (one thread, one kernel name and configuration, one 7-byte NVTX name).
// The "-mixed" figures store the realistic workload of bench/workload.h the same way: API calls
// from 4 threads; NVTX ranges from those threads with 40 PyTorch-style names of 7 to 87 bytes;
// kernels, memcpys and memsets (300 names, 50 configurations) packed as CUPTI fills its 8 MiB
// buffers and decoded with DecodeBuffer into one GpuBatch per buffer, which wait (as the parser's
// ready list does) until the drain.
//   memory_bench [events]
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/activity_records.h"
#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "collector/cupti/activity_decoder.h"
#include "collector/host/api_records.h"
#include "collector/cupti/record_structs.h"
#include "collector/host/nvtx_records.h"
#include "collector/host/thread_buffer.h"
#include "model/records.h"
#include "tests/support/packed_buffer.h"

using namespace gprof;
using namespace gprof::collector;

namespace {

uint64_t ResidentBytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string Bytes(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f B", v);
  return buf;
}

// NVTX range names as PyTorch's emit_nvtx / record_function and training scripts push them.
const char* const kNvtxNames[] = {
    "forward", "backward", "ProfilerStep#1234", "DataLoader.__next__", "Optimizer.step#AdamW.step",
    "Optimizer.zero_grad#AdamW.zero_grad", "DistributedDataParallel.forward", "aten::linear",
    "aten::addmm", "aten::matmul", "aten::mm", "aten::bmm", "aten::layer_norm",
    "aten::native_layer_norm", "aten::gelu", "aten::silu", "aten::softmax", "aten::_softmax",
    "aten::dropout", "aten::add_", "aten::mul", "aten::copy_", "aten::to", "aten::_to_copy",
    "aten::empty_strided", "aten::view", "aten::reshape", "aten::transpose", "aten::contiguous",
    "aten::_scaled_dot_product_flash_attention", "aten::scaled_dot_product_attention",
    "aten::cross_entropy_loss", "aten::nll_loss_forward", "aten::embedding",
    "autograd::engine::evaluate_function: AddmmBackward0",
    "autograd::engine::evaluate_function: NativeLayerNormBackward0",
    "aten::addmm, seq = 48213, op_id = 1187, sizes = [[4096], [8, 4096], [4096, 4096]]",
    "aten::linear, seq = 48212, op_id = 1186, sizes = [[8, 512, 4096], [4096, 4096], [4096]]",
    "nccl:all_reduce", "c10d::allreduce_ bucket 3 of 25 (25.0 MiB, 13 params, rank 0 of 8)"};
constexpr size_t kNvtxNameCount = sizeof(kNvtxNames) / sizeof(kNvtxNames[0]);

// Runs `body(thread_index)` on kMixedThreads threads at once and waits for them.
template <typename F>
void OnMixedThreads(F body) {
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < bench::kMixedThreads; ++t) threads.emplace_back(body, t);
  for (std::thread& t : threads) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  if (!InitThreadBuffers(4096ull << 20)) return 1;
  // Touch the thread's first chunk so registration is not counted.
  AppendApiRecord(1, 2, 0, 505, ApiDomain::kRuntime, 0);

  uint64_t before = ResidentBytes();
  double t0 = bench::NowSeconds();
  for (uint64_t i = 0; i < n; ++i) {
    AppendApiRecord(i, i + 1, static_cast<uint32_t>(i), 505, ApiDomain::kRuntime, 0);
  }
  const double fresh_ns = (bench::NowSeconds() - t0) * 1e9 / static_cast<double>(n);
  const double per_api = static_cast<double>(ResidentBytes() - before) / static_cast<double>(n);
  before = ResidentBytes();
  static const char kName[] = "forward";
  for (uint64_t i = 0; i < n / 2; ++i) {
    NvtxBeginFields push;
    push.ts = i;
    push.encoding = NvtxNameEncoding::kUtf8;
    AppendNvtxBegin(HostRecordType::kNvtxPush, push, kName, sizeof(kName) - 1);
    AppendNvtxEnd<HostRecordType::kNvtxPop>(0, i + 1, 0);
  }
  const double per_nvtx = static_cast<double>(ResidentBytes() - before) / static_cast<double>(n / 2 * 2);
  if (HostRecordsDropped() != 0) {
    std::fprintf(stderr, "host records dropped: arena too small\n");
    return 1;
  }

  // The realistic mix on the host side, into fresh arena chunks too (no reset since the best
  // case: a reset would hand out chunks that are already resident). The threads are started once
  // first so that their stacks (cached by glibc and reused) are not counted, and the generators
  // (heap) are built before measuring.
  OnMixedThreads([](uint32_t) {});
  std::vector<bench::MixedCalls> generators(bench::kMixedThreads);
  // API calls: each thread appends its own calls of the workload (the other threads' calls are
  // skipped), all threads at once; n calls in all.
  before = ResidentBytes();
  OnMixedThreads([n, &generators](uint32_t thread) {
    bench::MixedCalls& calls = generators[thread];
    for (uint64_t i = 0; i < n; ++i) {
      const bench::MixedCall c = calls.Next();
      if (c.api.tid != thread) continue;
      AppendApiRecord(c.api.start_ns, c.api.end_ns, c.api.correlation_id, c.api.cbid, c.api.domain,
                      0);
    }
  });
  const double per_api_mixed = static_cast<double>(ResidentBytes() - before) / static_cast<double>(n);
  // NVTX: n/2 push+pop pairs spread over the threads, names drawn from the list.
  before = ResidentBytes();
  OnMixedThreads([n](uint32_t thread) {
    uint32_t seed = 99 + thread;
    for (uint64_t i = thread; i < n / 2; i += bench::kMixedThreads) {
      seed = seed * 1664525u + 1013904223u;
      const char* name = kNvtxNames[(seed >> 8) % kNvtxNameCount];
      NvtxBeginFields push;
      push.ts = i;
      push.encoding = NvtxNameEncoding::kUtf8;
      AppendNvtxBegin(HostRecordType::kNvtxPush, push, name, static_cast<uint32_t>(std::strlen(name)));
      AppendNvtxEnd<HostRecordType::kNvtxPop>(0, i + 1, 0);
    }
  });
  const double per_nvtx_mixed =
      static_cast<double>(ResidentBytes() - before) / static_cast<double>(n / 2 * 2);
  if (HostRecordsDropped() != 0) {
    std::fprintf(stderr, "host records dropped: arena too small\n");
    return 1;
  }

  // The same appends into chunks already resident (Reset returns them to the free list).
  ResetHostRecords();
  t0 = bench::NowSeconds();
  for (uint64_t i = 0; i < n; ++i) {
    AppendApiRecord(i, i + 1, static_cast<uint32_t>(i), 505, ApiDomain::kRuntime, 0);
  }
  const double reused_ns = (bench::NowSeconds() - t0) * 1e9 / static_cast<double>(n);
  ResetHostRecords();

  // Kernels: decode from one CUPTI-layout record at a time into a batch.
  GpuBatch batch;
  before = ResidentBytes();
  KernelActivity k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z6matmulPKfS0_Pfi";
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = 256; k.blockY = k.blockZ = 1;
  k.contextId = 1;
  k.streamId = 7;
  for (uint64_t i = 0; i < n; ++i) {
    k.start = 1000 * i;
    k.end = k.start + 500;
    k.correlationId = static_cast<uint32_t>(i + 1);
    DecodeRecord(reinterpret_cast<const CUpti_Activity*>(&k), &batch);
  }
  const double per_kernel = static_cast<double>(ResidentBytes() - before) / static_cast<double>(n);
  const double kernel_capacity =
      static_cast<double>(batch.kernels.capacity() * sizeof(Kernel)) / static_cast<double>(n);

  bench::PrintFigure("5a", "resident bytes per kernel event (GpuBatch, RSS)", Bytes(per_kernel),
                     "<= 48 B", per_kernel <= 48 ? "PASS" : "FAIL");
  bench::PrintFigure("5b", "resident bytes per API event (thread buffer, RSS)", Bytes(per_api),
                     "<= 32 B", per_api <= 32 ? "PASS" : "FAIL");
  bench::PrintFigure("5c", "resident bytes per NVTX event (push or pop, thread buffer, RSS)",
                     Bytes(per_nvtx), "<= 32 B", per_nvtx <= 32 ? "PASS" : "FAIL");
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f / %.1f ns", fresh_ns, reused_ns);
  bench::PrintFigure("5d", "append one 32-B API record: fresh arena pages / resident pages", buf,
                     "-", "INFO");
  std::printf("sizes: API record %zu (4 header); NVTX push %u+name(7)->pad8; pop %zu; "
              "Kernel %zu (+%zu LaunchConfig interned); kernel vector capacity %.1f B/event\n",
              sizeof(ApiHostRecord),
              4 + NvtxBeginFixedPayload(HostRecordType::kNvtxPush, false, NvtxNameEncoding::kUtf8),
              sizeof(NvtxRecordFixed), sizeof(Kernel), sizeof(LaunchConfig), kernel_capacity);

  // GPU records of the realistic mix: n of them (API-only calls have none), packed into one
  // 8 MiB buffer that is reused (as CUPTI reuses the pool's buffers), each full buffer decoded
  // into its own batch, the batches kept. The best case's batch stays alive meanwhile, so that
  // no freed memory is reused here.
  {
    const std::vector<std::string>& names = bench::MixedKernelNames();
    const std::vector<LaunchConfig>& configs = bench::MixedLaunchConfigs();
    bench::PackedBuffer buffer;
    std::vector<GpuBatch> ready;
    ready.reserve(n / 30'000 + 16);
    bench::MixedCalls calls;
    uint64_t gpu = 0, kernels = 0;
    const auto decode = [&] {
      ready.emplace_back();
      uint64_t errors = 0;
      if (DecodeBuffer(buffer.bytes.data(), buffer.used, &test_support::WalkPackedRecords,
                       &ready.back(), &errors) != buffer.records || errors != 0) {
        std::fprintf(stderr, "decoding lost records\n");
        std::exit(1);
      }
      buffer.Clear();
    };
    before = ResidentBytes();
    while (gpu < n) {
      const bench::MixedCall c = calls.Next();
      if (c.kind == bench::MixedKind::kApiOnly) continue;
      for (;;) {
        bool added = false;
        if (c.kind == bench::MixedKind::kKernel) {
          added = buffer.Add(bench::ToKernelActivity(c.kernel, configs[c.kernel.launch_config],
                                                     names[c.kernel.name].c_str()));
        } else if (c.kind == bench::MixedKind::kMemcpy) {
          added = buffer.Add(bench::ToMemcpyActivity(c.memcpy));
        } else {
          added = buffer.Add(bench::ToMemsetActivity(c.memset));
        }
        if (added) break;
        decode();
      }
      ++gpu;
      kernels += c.kind == bench::MixedKind::kKernel;
    }
    if (buffer.used != 0) decode();
    const double per_gpu_mixed = static_cast<double>(ResidentBytes() - before) / static_cast<double>(n);
    bench::PrintFigure("5a-mixed", "resident bytes per GPU event, realistic mix (" +
                                       std::to_string(kernels * 100 / gpu) +
                                       " % kernels, rest memcpy/memset; 300 names, 50 configs; one "
                                       "GpuBatch per 8 MiB buffer, RSS)",
                       Bytes(per_gpu_mixed), "<= 48 B", per_gpu_mixed <= 48 ? "PASS" : "FAIL");
    std::printf("mixed GPU records: %zu batches\n", ready.size());
  }
  bench::PrintFigure("5b-mixed", "resident bytes per API event, 4 threads at once (thread buffers, RSS)",
                     Bytes(per_api_mixed), "<= 32 B", per_api_mixed <= 32 ? "PASS" : "FAIL");
  double name_bytes = 0;
  size_t shortest = SIZE_MAX, longest = 0;
  for (const char* name : kNvtxNames) {
    name_bytes += static_cast<double>(std::strlen(name));
    shortest = std::min(shortest, std::strlen(name));
    longest = std::max(longest, std::strlen(name));
  }
  char what[160];
  std::snprintf(what, sizeof(what),
                "resident bytes per NVTX event, 4 threads, %zu names of %zu-%zu B (avg %.0f B; RSS)",
                kNvtxNameCount, shortest, longest,
                name_bytes / static_cast<double>(kNvtxNameCount));
  bench::PrintFigure("5c-mixed", what, Bytes(per_nvtx_mixed), "<= 32 B",
                     per_nvtx_mixed <= 32 ? "PASS" : "FAIL");
  return 0;
}
