// Figure 3: activity ingest. Completed CUPTI buffers holding real CUDA 13.0 record layouts
// (CUpti_ActivityKernel10 216 B, Memcpy6 96 B, Memset4 88 B; 90/5/5 %) are walked and decoded
// into a GpuBatch (collector/cupti/activity_decoder.h: DecodeBuffer -> our POD records, kernel names
// and launch configurations interned), which is what the parser thread does per buffer. The
// walker stands in for cuptiActivityGetNextRecord (records are packed; CUPTI's walker is the
// same pointer arithmetic). Correlation with API calls is not done here: it is a lookup by id
// at export time (analysis/attribution/correlation_index.h). One core (this thread).
// Figure 3 is the best case: 4 kernel names (every name lookup hits the decoder's cache), 3
// launch configurations, 2 streams. Figure 3-mixed decodes the realistic workload of
// bench/workload.h instead: 300 long mangled names (more than the 64 slots of the name cache),
// 50 launch configurations, 8 streams, kernels, copies and memsets as a training step issues them.
//   ingest_bench [records]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/activity_records.h"
#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "collector/cupti/activity_decoder.h"
#include "collector/cupti/record_structs.h"
#include "tests/support/packed_buffer.h"

using namespace gprof;
using namespace gprof::collector;
using gprof::bench::PackedBuffer;

namespace {

const char* const kNames[] = {
    "_Z6matmulPKfS0_Pfi",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_",
    "_Z11tiny_kernelPi", "_Z13softmax_fwdPfPKfi"};

// Fills `buffer` (8 MiB, as CUPTI's default activity buffers) with records; returns bytes used.
size_t FillBuffer(std::vector<uint8_t>* buffer, uint32_t* corr, uint64_t* ts, size_t* count) {
  size_t used = 0;
  *count = 0;
  for (;;) {
    const uint32_t c = (*corr)++;
    const int pick = static_cast<int>(c % 20);
    uint8_t* at = buffer->data() + used;
    if (pick < 18) {
      if (used + sizeof(KernelActivity) > buffer->size()) break;
      KernelActivity k{};
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = *ts;
      k.end = *ts + 3000 + c % 977;
      k.correlationId = c;
      k.name = kNames[c % 4];
      k.gridX = 528 + (c % 3); k.gridY = 1; k.gridZ = 1;
      k.blockX = 256; k.blockY = 1; k.blockZ = 1;
      k.registersPerThread = 64;
      k.staticSharedMemory = 49152;
      k.deviceId = 0;
      k.contextId = 1;
      k.streamId = 7 + c % 2;
      std::memcpy(at, &k, sizeof(k));
      used += sizeof(k);
    } else if (pick == 18) {
      if (used + sizeof(MemcpyActivity) > buffer->size()) break;
      MemcpyActivity m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
      m.bytes = 1 << 20;
      m.start = *ts;
      m.end = *ts + 50'000;
      m.correlationId = c;
      m.contextId = 1;
      m.streamId = 7;
      std::memcpy(at, &m, sizeof(m));
      used += sizeof(m);
    } else {
      if (used + sizeof(MemsetActivity) > buffer->size()) break;
      MemsetActivity m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      m.bytes = 4096;
      m.start = *ts;
      m.end = *ts + 1500;
      m.correlationId = c;
      m.contextId = 1;
      m.streamId = 7;
      std::memcpy(at, &m, sizeof(m));
      used += sizeof(m);
    }
    *ts += 5000;
    ++*count;
  }
  return used;
}

// Decodes every buffer, one GpuBatch per buffer as ParserMain does; best of 3, thread CPU
// seconds. Exits when a record is lost.
double BestDecodeSeconds(std::vector<PackedBuffer>& buffers, uint64_t total) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    uint64_t decoded = 0;
    uint64_t errors = 0;
    const double t0 = bench::NowSeconds();
    for (PackedBuffer& b : buffers) {
      GpuBatch batch;
      decoded += DecodeBuffer(b.bytes.data(), b.used, &test_support::WalkPackedRecords, &batch, &errors);
    }
    best = std::min(best, bench::NowSeconds() - t0);
    if (decoded != total || errors != 0) {
      std::fprintf(stderr, "decoded %llu of %llu records, %llu errors\n",
                   static_cast<unsigned long long>(decoded), static_cast<unsigned long long>(total),
                   static_cast<unsigned long long>(errors));
      std::exit(1);
    }
  }
  return best;
}

std::string Rate(double records, double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f M rec/s", records / seconds / 1e6);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t target = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  // Figure 3: the best case. A set of filled buffers, decoded batch by batch as the parser
  // thread would.
  double rate = 0;
  {
    std::vector<PackedBuffer> buffers;
    uint32_t corr = 1;
    uint64_t ts = 1'764'000'000'000'000'000ull;
    uint64_t total = 0;
    while (total < target) {
      buffers.emplace_back();
      size_t n = 0;
      buffers.back().used = FillBuffer(&buffers.back().bytes, &corr, &ts, &n);
      total += n;
    }
    const double best = BestDecodeSeconds(buffers, total);
    rate = static_cast<double>(total) / best / 1e6;
    bench::PrintFigure("3", "activity ingest, 1 core (decode + store, CUDA 13 layouts; best case: 4 "
                       "names, 3 configs, 2 streams)",
                       Rate(static_cast<double>(total), best), ">= 25 M rec/s",
                       rate >= 25 ? "PASS" : "FAIL");
  }
  // Figure 3-mixed: the realistic workload, packed as CUPTI fills its buffers (in call order;
  // API calls without GPU work have no activity record here).
  {
    const std::vector<std::string>& names = bench::MixedKernelNames();
    const std::vector<LaunchConfig>& configs = bench::MixedLaunchConfigs();
    std::vector<PackedBuffer> buffers(1);
    uint64_t total = 0, kernels = 0, memcpys = 0, memsets = 0;
    bench::MixedCalls calls;
    while (total < target) {
      const bench::MixedCall c = calls.Next();
      bool added = true;
      for (int attempt = 0; attempt < 2; ++attempt) {
        PackedBuffer& b = buffers.back();
        switch (c.kind) {
          case bench::MixedKind::kKernel:
            added = b.Add(bench::ToKernelActivity(c.kernel, configs[c.kernel.launch_config],
                                                  names[c.kernel.name].c_str()));
            break;
          case bench::MixedKind::kMemcpy: added = b.Add(bench::ToMemcpyActivity(c.memcpy)); break;
          case bench::MixedKind::kMemset: added = b.Add(bench::ToMemsetActivity(c.memset)); break;
          case bench::MixedKind::kApiOnly: break;
        }
        if (added) break;
        buffers.emplace_back();  // full: CUPTI completes it and starts the next
      }
      if (c.kind == bench::MixedKind::kApiOnly) continue;
      ++total;
      kernels += c.kind == bench::MixedKind::kKernel;
      memcpys += c.kind == bench::MixedKind::kMemcpy;
      memsets += c.kind == bench::MixedKind::kMemset;
    }
    const double best = BestDecodeSeconds(buffers, total);
    const double mixed = static_cast<double>(total) / best / 1e6;
    char what[256];
    std::snprintf(what, sizeof(what),
                  "same, realistic mix: %u names (avg %.0f chars), %u configs, %u streams, "
                  "%.0f/%.0f/%.0f %% kernel/memcpy/memset",
                  bench::kMixedKernelNames, bench::MixedKernelNameAverageLength(),
                  bench::kMixedLaunchConfigs, bench::kMixedStreams, 100.0 * kernels / total,
                  100.0 * memcpys / total, 100.0 * memsets / total);
    bench::PrintFigure("3-mixed", what, Rate(static_cast<double>(total), best), ">= 25 M rec/s",
                       mixed >= 25 ? "PASS" : "FAIL");
    std::printf("ingest: best case %.1f M rec/s, mixed %.1f M rec/s over %zu buffers of %zu KiB\n",
                rate, mixed, buffers.size(), bench::kActivityBufferBytes / 1024);
  }
  return 0;
}
