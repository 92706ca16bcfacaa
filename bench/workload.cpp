// The realistic benchmark workload (see workload.h).
#include "bench/workload.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_set>

#include "tests/support/sample_device.h"

namespace gprof::bench {
namespace {

// An Itanium <source-name>: the identifier prefixed with its length.
std::string L(const std::string& s) { return std::to_string(s.size()) + s; }

// Builtin and class types as template arguments (float, double, c10::Half, c10::BFloat16, int,
// long). Nested names add substitution candidates after every S?_ the templates below use, so
// swapping them keeps the manglings valid.
const char* const kTypes[] = {"f", "d", "N3c104HalfE", "N3c108BFloat16E", "i", "l"};
const char* const kFunctors[] = {
    "CUDAFunctor_add", "MulFunctor", "DivFunctor", "AddFunctor", "SubFunctor",
    "CompareEqFunctor", "AbsFunctor", "GeluCUDAKernelImpl", "SiluFunctor", "SigmoidFunctor",
    "TanhFunctor", "ExpFunctor", "RsqrtFunctor", "FillFunctor", "WhereFunctor", "CopyFunctor",
    "MaxFunctor", "MinFunctor", "PowTensorScalarFunctor", "ReluFunctor"};

// One family of kernel names: combination k (0 <= k < count) -> name.
struct Family {
  uint32_t take;   // names taken from this family
  uint32_t count;  // combinations it has
  std::function<std::string(uint32_t)> name;
};

std::vector<std::string> BuildNames() {
  const std::string at = "_ZN2at6native";
  const std::vector<Family> families = {
      // void at::native::vectorized_elementwise_kernel<V, at::native::F<T>, at::detail::Array<char*, A>>(...)
      {90, 3 * 20 * 6 * 2,
       [&](uint32_t k) {
         const int v[] = {2, 4, 8};
         return at + "29vectorized_elementwise_kernelILi" + std::to_string(v[k % 3]) + "ENS0_" +
                L(kFunctors[k / 3 % 20]) + "I" + kTypes[k / 60 % 6] + "EENS_6detail5ArrayIPcLi" +
                std::to_string(2 + k / 360 % 2) + "EEEEEviT0_T1_";
       }},
      // at::native::elementwise_kernel<128, U, gpu_kernel_impl_nocast<BinaryFunctor<T, T, T, F<T>>>(...)::{lambda(int)#1}>
      {50, 2 * 20 * 6,
       [&](uint32_t k) {
         const std::string t = kTypes[k / 40 % 6];
         return at + "18elementwise_kernelILi128ELi" + std::to_string(2 + 2 * (k % 2)) +
                "EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorI" + t + t + t + "NS0_" +
                L(kFunctors[k / 2 % 20]) + "I" + t +
                "EEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_";
       }},
      // at::native::reduce_kernel<R, 1, ReduceOp<T, Ops<T, T>, unsigned int, T, V>>
      {40, 2 * 6 * 6 * 3,
       [&](uint32_t k) {
         const char* ops[] = {"MeanOps", "NormTwoOps", "MaxOps", "MinOps", "WelfordOps", "SumOps"};
         const int r[] = {512, 256};
         const int v[] = {4, 2, 1};
         const std::string t = kTypes[k / 12 % 6];
         return at + "13reduce_kernelILi" + std::to_string(r[k % 2]) + "ELi1ENS0_8ReduceOpI" + t +
                "NS0_" + L(ops[k / 2 % 6]) + "I" + t + t + "EEj" + t + "Li" +
                std::to_string(v[k / 72 % 3]) + "EEEEEvT1_";
       }},
      // at::native::(anonymous)::multi_tensor_apply_kernel<TensorListMetadata<D>, Fn<T, D>, float...>
      {20, 6 * 4 * 6,
       [&](uint32_t k) {
         const char* fns[] = {"AdamFunctor", "SGDFunctor", "LpNormFunctor", "ZeroFunctor",
                              "BinaryOpScalarFunctor", "UnaryOpFunctor"};
         const std::string d = std::to_string(1 + k / 6 % 4);
         return at + "12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi" + d +
                "EEENS1_" + L(fns[k % 6]) + "I" + kTypes[k / 24 % 6] + "Li" + d +
                "EEEJffffffEEEvT_T0_DpT1_";
       }},
      // void cutlass::Kernel2<cutlass_80_tensorop_..._align8>(T::Params)
      {30, 4 * 5 * 3 * 2,
       [&](uint32_t k) {
         const char* ops[] = {"s16816gemm_f16", "h16816gemm", "bf16_s16816gemm_bf16", "s1688gemm_tf32"};
         const char* tiles[] = {"128x128_32x3", "256x128_32x3", "64x64_64x5", "128x256_64x3",
                                "64x128_32x6"};
         const char* layouts[] = {"nn", "tn", "nt"};
         const std::string name = std::string("cutlass_80_tensorop_") + ops[k % 4] + "_" +
                                  tiles[k / 4 % 5] + "_" + layouts[k / 20 % 3] + "_align" +
                                  (k / 60 % 2 ? "4" : "8");
         return "_ZN7cutlass7Kernel2I" + L(name) + "EEvNT_6ParamsE";
       }},
      // flash::flash_fwd_kernel<Flash_fwd_kernel_traits<H, BM, BN, 4, false, false, cutlass::X>, bools...>
      {15, 3 * 2 * 2 * 2 * 2,
       [&](uint32_t k) {
         const int h[] = {64, 128, 256};
         return std::string("_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi") +
                std::to_string(h[k % 3]) + "ELi" + std::to_string(64 << (k / 3 % 2)) + "ELi" +
                std::to_string(64 << (k / 6 % 2)) + "ELi4ELb0ELb0EN7cutlass" +
                (k / 12 % 2 ? "10bfloat16_t" : "6half_t") + "EELb1ELb0ELb0ELb0ELb1ELb" +
                (k / 24 % 2 ? "1" : "0") + "ELb0ELb0EEEvNS_16Flash_fwd_paramsE";
       }},
      // cuBLAS kernels are extern "C": CUPTI reports them as they are (nothing to demangle).
      {30, 3 * 3 * 4 * 2,
       [&](uint32_t k) {
         const char* types[] = {"f16f16_f16f32_f32", "bf16bf16_bf16f32_f32", "f32f32_f32f32_f32"};
         const char* layouts[] = {"tn", "nn", "nt"};
         const char* tiles[] = {"64x128", "128x128", "128x256", "256x128"};
         return std::string("sm90_xmma_gemm_") + types[k % 3] + "_" + layouts[k / 3 % 3] +
                "_n_tilesize" + tiles[k / 9 % 4] + "x64_warpgroupsize" + (k / 36 % 2 ? "2" : "1") +
                "x1x1_execute_segment_k_off_kernel__5x_cublas";
       }},
      // at::native::(anonymous namespace of SoftMax.cu)::cunn_SoftMax...<V, T, T, T, Epilogue>
      {25, 3 * 3 * 6,
       [&](uint32_t k) {
         const char* kernels[] = {"cunn_SoftMaxForward", "cunn_SoftMaxBackward",
                                  "cunn_SoftMaxForwardSmem"};
         const char* epilogues[] = {"SoftMaxForwardEpilogue", "LogSoftMaxForwardEpilogue",
                                    "SoftMaxBackwardEpilogue"};
         const std::string t = kTypes[k / 9 % 6];
         return at + L("_GLOBAL__N__d8ceb000_10_SoftMax_cu_9f978f63") + L(kernels[k % 3]) + "ILi" +
                std::to_string(2 << (k / 3 % 3)) + "E" + t + t + t + "NS1_" +
                L(epilogues[k % 3]) + "EEEvPT2_PKT0_i";
       }},
  };
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const Family& f : families) {
    uint32_t taken = 0;
    // A stride coprime with the count spreads the taken names over every axis of the family.
    uint32_t stride = 7;
    while (std::gcd(stride, f.count) != 1) stride += 2;
    for (uint32_t i = 0; i < f.count && taken < f.take; ++i) {
      std::string n = f.name(i * stride % f.count);
      if (seen.insert(n).second) {
        names.push_back(std::move(n));
        ++taken;
      }
    }
  }
  return names;
}

std::vector<LaunchConfig> BuildConfigs() {
  const uint32_t grids[] = {1, 2, 4, 8, 16, 32, 64, 108, 132, 264, 528, 1024, 2048, 4096, 8192,
                            16384, 65535};
  const uint32_t blocks[][3] = {{32, 1, 1},  {64, 1, 1},  {128, 1, 1}, {256, 1, 1},
                                {512, 1, 1}, {1024, 1, 1}, {128, 4, 1}};
  const uint32_t statics[] = {0, 4096, 16384, 49152};
  const uint32_t dynamics[] = {0, 0, 65536, 101376, 232448};
  std::vector<LaunchConfig> configs;
  for (uint32_t c = 0; c < kMixedLaunchConfigs; ++c) {
    LaunchConfig lc{};
    lc.grid[0] = grids[c % 17];
    lc.grid[1] = c % 5 == 0 ? 1 + c % 12 : 1;  // 2-D grids (GEMM tiles) for a fifth
    lc.grid[2] = 1;
    lc.block[0] = blocks[c % 7][0];
    lc.block[1] = blocks[c % 7][1];
    lc.block[2] = blocks[c % 7][2];
    lc.registers_per_thread = 16 + (c * 37) % 232 / 8 * 8;
    lc.static_shared_bytes = statics[c % 4];
    lc.dynamic_shared_bytes = dynamics[c % 5];
    lc.context_id = 1;
    lc.device_id = 0;
    configs.push_back(lc);
  }
  return configs;
}

// CUPTI callback ids (cupti_runtime_cbid.h / cupti_driver_cbid.h, CUDA 13) with display names.
struct Api {
  ApiDomain domain;
  uint16_t cbid;
  const char* name;
};
constexpr Api kLaunchKernel{ApiDomain::kRuntime, 211, "cudaLaunchKernel"};
constexpr Api kCuLaunchKernel{ApiDomain::kDriver, 307, "cuLaunchKernel"};
constexpr Api kMemcpyAsync{ApiDomain::kRuntime, 41, "cudaMemcpyAsync"};
constexpr Api kMemsetAsync{ApiDomain::kRuntime, 51, "cudaMemsetAsync"};
constexpr Api kDeviceSynchronize{ApiDomain::kRuntime, 165, "cudaDeviceSynchronize"};
constexpr Api kApiOnly[] = {{ApiDomain::kRuntime, 135, "cudaEventRecord"},
                            {ApiDomain::kRuntime, 138, "cudaEventQuery"},
                            {ApiDomain::kRuntime, 147, "cudaStreamWaitEvent"},
                            {ApiDomain::kRuntime, 17, "cudaGetDevice"},
                            {ApiDomain::kRuntime, 11, "cudaPeekAtLastError"}};

// Two streams per thread: main 7/13, autograd 15/17, data loader 21/23, communication 25/27.
constexpr uint32_t kStreams[kMixedStreams] = {7, 13, 15, 17, 21, 23, 25, 27};

}  // namespace

// One call of the repeating step, without its times and correlation id.
struct MixedCalls::Slot {
  MixedKind kind;
  uint8_t thread;
  uint8_t stream;  // index into kStreams
  Api api;
  uint16_t name;
  uint16_t config;
  uint32_t api_ns;  // duration of the API call
  uint32_t gpu_ns;  // duration of the GPU record
  uint64_t bytes;
  CopyKind copy_kind;
  MemKind src_kind;
  MemKind dst_kind;
  bool synchronize;  // cudaDeviceSynchronize: returns when every stream is idle
};

const std::vector<std::string>& MixedKernelNames() {
  static const std::vector<std::string> names = BuildNames();
  return names;
}

const std::vector<LaunchConfig>& MixedLaunchConfigs() {
  static const std::vector<LaunchConfig> configs = BuildConfigs();
  return configs;
}

double MixedKernelNameAverageLength() {
  double sum = 0;
  for (const std::string& n : MixedKernelNames()) sum += static_cast<double>(n.size());
  return sum / static_cast<double>(MixedKernelNames().size());
}

MixedCalls::MixedCalls() {
  const uint64_t t0 = 1'764'000'000'000'000'000ull + 1'000'000;  // late 2025, CLOCK_REALTIME ns
  wall_ = t0;
  std::fill(std::begin(thread_clock_), std::end(thread_clock_), t0);
  std::fill(std::begin(stream_clock_), std::end(stream_clock_), t0);
  uint32_t seed = 4242;
  const auto rnd = [&seed](uint32_t range) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % range;
  };
  // Every name appears in each step: the first 300 kernels take a shuffled order of all names,
  // the rest repeat a hot set (the elementwise and GEMM kernels a step runs most).
  std::vector<uint16_t> order(kMixedKernelNames);
  for (uint32_t i = 0; i < kMixedKernelNames; ++i) order[i] = static_cast<uint16_t>(i);
  for (uint32_t i = kMixedKernelNames - 1; i > 0; --i) std::swap(order[i], order[rnd(i + 1)]);
  uint32_t kernels = 0;
  for (uint32_t i = 0; i < kMixedStepCalls; ++i) {
    Slot s{};
    const uint32_t r = rnd(100);
    if (r < 78) {
      s.kind = MixedKind::kKernel;
      s.name = kernels < kMixedKernelNames ? order[kernels] : order[rnd(60)];
      ++kernels;
      // Each name has its own configuration; three launches in ten use another one.
      s.config = static_cast<uint16_t>(
          rnd(10) < 7 ? s.name * 7 % kMixedLaunchConfigs
                      : (s.name * 7 + 1 + rnd(3)) % kMixedLaunchConfigs);
      const uint32_t t = rnd(100);
      s.thread = t < 55 ? 0 : t < 90 ? 1 : 3;
      s.api = rnd(6) == 0 ? kCuLaunchKernel : kLaunchKernel;
      s.api_ns = 2'500 + rnd(4'000);
      // Mostly short kernels, some GEMM/attention-sized ones.
      const uint32_t d = rnd(100);
      s.gpu_ns = d < 70 ? 1'500 + rnd(8'000) : d < 95 ? 10'000 + rnd(40'000) : 60'000 + rnd(300'000);
    } else if (r < 84) {
      s.kind = MixedKind::kMemcpy;
      s.api = kMemcpyAsync;
      const uint32_t c = rnd(3);
      s.thread = c == 0 ? 2 : 0;  // the data loader copies inputs in; the main thread the rest
      s.copy_kind = c == 0 ? CopyKind::kHtoD : c == 1 ? CopyKind::kDtoH : CopyKind::kDtoD;
      s.src_kind = c == 0 ? MemKind::kPinned : MemKind::kDevice;
      s.dst_kind = c == 1 ? MemKind::kPageable : MemKind::kDevice;
      s.bytes = 4096ull << rnd(14);  // 4 KiB .. 32 MiB
      s.api_ns = 3'000 + rnd(10'000);
      s.gpu_ns = static_cast<uint32_t>(1'500 + s.bytes / 25);  // ~25 GB/s
    } else if (r < 89) {
      s.kind = MixedKind::kMemset;
      s.api = kMemsetAsync;
      s.thread = rnd(2);
      s.bytes = 512ull << rnd(16);
      s.api_ns = 2'000 + rnd(3'000);
      s.gpu_ns = static_cast<uint32_t>(1'000 + s.bytes / 1000);
    } else {
      s.kind = MixedKind::kApiOnly;
      s.thread = rnd(kMixedThreads);
      s.synchronize = r == 89 || r == 90;  // ~2 % of calls
      s.api = s.synchronize ? kDeviceSynchronize : kApiOnly[rnd(5)];
      s.api_ns = 300 + rnd(2'000);
    }
    s.stream = static_cast<uint8_t>(s.thread * 2 + rnd(2));
    step_.push_back(s);
  }
  seed_ = seed;
}

MixedCalls::~MixedCalls() = default;

MixedCall MixedCalls::Next() {
  const Slot& s = step_[index_ % step_.size()];
  const auto rnd = [this](uint32_t range) {
    seed_ = seed_ * 1664525u + 1013904223u;
    return (seed_ >> 8) % range;
  };
  MixedCall c{};
  c.kind = s.kind;
  const uint32_t corr = static_cast<uint32_t>(index_ + 100);
  ++index_;
  // Threads run side by side: a call starts when its thread is free and the (shared) program has
  // got that far.
  uint64_t& thread_clock = thread_clock_[s.thread];
  c.api.start_ns = std::max(wall_, thread_clock) + rnd(200);
  c.api.end_ns = c.api.start_ns + s.api_ns + rnd(500);
  if (s.synchronize) {
    for (uint64_t stream_end : stream_clock_) c.api.end_ns = std::max(c.api.end_ns, stream_end + 2'000);
  }
  c.api.correlation_id = corr;
  c.api.tid = s.thread;
  c.api.cbid = s.api.cbid;
  c.api.domain = s.api.domain;
  thread_clock = c.api.end_ns + 300 + rnd(1'000);
  wall_ += 1'200 + rnd(600);
  if (s.kind == MixedKind::kApiOnly) return c;
  uint64_t& stream_clock = stream_clock_[s.stream];
  const uint64_t start = std::max(stream_clock, c.api.end_ns - s.api_ns / 2 + rnd(1'000));
  const uint64_t end = start + s.gpu_ns + rnd(200);
  stream_clock = end + 100 + rnd(400);
  const uint32_t stream_id = kStreams[s.stream];
  if (s.kind == MixedKind::kKernel) {
    c.kernel.start_ns = start;
    c.kernel.end_ns = end;
    c.kernel.correlation_id = corr;
    c.kernel.name = s.name;
    c.kernel.launch_config = s.config;
    c.kernel.stream_id = stream_id;
  } else if (s.kind == MixedKind::kMemcpy) {
    Memcpy& m = c.memcpy;
    m.start_ns = start;
    m.end_ns = end;
    m.bytes = s.bytes;
    m.correlation_id = corr;
    m.stream_id = stream_id;
    m.context_id = 1;
    m.kind = s.copy_kind;
    m.src_kind = s.src_kind;
    m.dst_kind = s.dst_kind;
    m.is_async = 1;
  } else {
    Memset& m = c.memset;
    m.start_ns = start;
    m.end_ns = end;
    m.bytes = s.bytes;
    m.correlation_id = corr;
    m.stream_id = stream_id;
    m.mem_kind = MemKind::kDevice;
    m.is_async = 1;
  }
  return c;
}

void AddMixedApiNames(Profile* p) {
  const auto add = [p](const Api& a) {
    p->api_names.push_back({a.cbid, a.domain, 0, p->strings.Intern(a.name)});
  };
  add(kLaunchKernel);
  add(kCuLaunchKernel);
  add(kMemcpyAsync);
  add(kMemsetAsync);
  add(kDeviceSynchronize);
  for (const Api& a : kApiOnly) add(a);
}

Profile MakeMixedProfile(uint64_t calls) {
  Profile p;
  p.info.pid = 123456;
  p.info.program = "train";
  p.info.command_line = "python train.py --steps " + std::to_string(calls / kMixedStepCalls);
  p.info.hostname = "bench";
  p.info.gpu_status = "collected";
  p.info.start_ns = 1'764'000'000'000'000'000ull;
  p.devices.push_back(testing::SampleHopperDevice(&p, "NVIDIA H200", 150ull << 30));
  std::vector<StringId> names;
  for (const std::string& n : MixedKernelNames()) names.push_back(p.strings.Intern(n));
  p.launch_configs = MixedLaunchConfigs();
  AddMixedApiNames(&p);
  p.api_calls.reserve(calls);
  MixedCalls gen;
  uint64_t end = p.info.start_ns;
  for (uint64_t i = 0; i < calls; ++i) {
    MixedCall c = gen.Next();
    c.api.tid += p.info.pid;
    end = std::max(end, c.api.end_ns);
    p.api_calls.push_back(c.api);
    switch (c.kind) {
      case MixedKind::kKernel:
        c.kernel.name = names[c.kernel.name];
        p.kernels.push_back(c.kernel);
        end = std::max(end, c.kernel.end_ns);
        break;
      case MixedKind::kMemcpy:
        p.memcpys.push_back(c.memcpy);
        end = std::max(end, c.memcpy.end_ns);
        break;
      case MixedKind::kMemset:
        p.memsets.push_back(c.memset);
        end = std::max(end, c.memset.end_ns);
        break;
      case MixedKind::kApiOnly:
        break;
    }
  }
  p.info.end_ns = end + 1'000;
  return p;
}

}  // namespace gprof::bench
