// Figure 5: resident bytes the collector keeps per event, measured as the growth of this process's
// resident set (/proc/self/statm) while events are stored the way the collector stores them:
//   API call  - one kApiCall record in the calling thread's buffer (collector/api_records.h)
//   NVTX pair - a push record (inline name "forward") and a pop record, appended with the same
//               functions the NVTX hooks use (collector/nvtx_records.h); reported per event
//   kernel    - decoded from CUpti_ActivityKernel10 records into a GpuBatch (activity_decoder.h),
//               where kernels wait until the drain at window end / exit
// CUPTI's own activity buffers are a fixed pool (GPROF_ACTIVITY_* config), not per event.
//   memory_bench [events]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "bench/bench_profile.h"
#include "collector/cupti/activity_decoder.h"
#include "collector/host/api_records.h"
#include "collector/cupti/record_structs.h"
#include "collector/host/nvtx_records.h"
#include "collector/host/thread_buffer.h"
#include "model/records.h"

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
  return 0;
}
