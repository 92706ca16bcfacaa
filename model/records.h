// Event records: the POD structs that the collector produces, the dump stores and the exporters
// read. Nothing here depends on CUDA; CUPTI enums are copied into our own small enums by the
// collector's decoder so the exporters build anywhere.
//
// Data flow: collector -> Profile (these records + strings) -> dump file -> Profile -> exporters.
//
// Every record is trivially copyable, has a fixed size (static_assert'ed) and is written to the dump
// as raw little-endian bytes. Timestamps are CLOCK_REALTIME nanoseconds (CUPTI's clock on Linux).
// Strings are ids into the profile's StringTable (0 is the empty string).
#pragma once

#include <cstdint>
#include <type_traits>

namespace gprof {

using StringId = uint32_t;
inline constexpr StringId kNoString = 0;

// ---- Host side ------------------------------------------------------------------------------

// Flags on a host range.
enum RangeFlags : uint16_t {
  kRangeOpenAtEnd = 1 << 0,  // never closed: closed at the end of the profile and flagged
  kRangeStartEnd = 1 << 1,   // nvtxRangeStart/End (may cross threads), not push/pop
  kRangeStep = 1 << 2,       // a ProfilerStep#N range synthesized by step detection
  kRangeTorch = 1 << 3,      // a PyTorch RecordFunction range (torch_op_name.h): its NVTX text
                             // carried torch's ", seq = ", ", op_id = " ... suffixes, now split
                             // into the fields below; `name` is the op name as torch names it
  kRangeCpuOp = 1 << 4,      // ... and an operator (Kineto's cpu_op), not a user_annotation
  kRangeCutAtWindowEnd = 1 << 5,  // still open when its schedule window ended: it ends at the
                                  // window's end there, and goes on past it (not a loss)
};

// An NVTX range (push/pop or start/end) on a host thread. 48 bytes.
struct HostRange {
  uint64_t start_ns;
  uint64_t end_ns;
  StringId name;
  uint32_t tid;       // OS thread id that opened the range
  uint16_t domain;    // index into Profile::domains (0 = default domain)
  uint16_t flags;     // RangeFlags
  uint32_t category;  // NVTX category id (0 = none)
  // kRangeTorch only (else 0 / -1 / kNoString): RecordFunction's handle (Kineto's "Record
  // function id"), the autograd sequence number ("Sequence number", -1 = none) and, with
  // --record-shapes, the input shapes as torch prints them ("[[2, 3], []]", Kineto's
  // "Input Dims").
  uint64_t op_id = 0;
  int32_t seq = -1;
  StringId shapes = kNoString;
};
static_assert(sizeof(HostRange) == 48);

// An NVTX mark (instant). 24 bytes.
struct HostMark {
  uint64_t ts_ns;
  StringId name;
  uint32_t tid;
  uint16_t domain;
  uint16_t pad0;
  uint32_t category;
};
static_assert(sizeof(HostMark) == 24);

enum class ApiDomain : uint8_t { kRuntime = 1, kDriver = 2 };

// A CUDA runtime or driver API call (enter/exit). 32 bytes.
struct ApiCall {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation_id;  // CUPTI correlation id; GPU records carry the same id
  uint32_t tid;
  uint16_t cbid;            // CUPTI callback id within its domain
  ApiDomain domain;
  uint8_t flags;            // ApiCallFlags, set by the collector from its cbid tables
  int32_t return_code;      // cudaError_t / CUresult
};
static_assert(sizeof(ApiCall) == 32);

// ApiCall::flags. The collector knows which callback ids launch work (its CUPTI tables); the flag
// carries that fact to the dump reader, which checks GPU records against calls across the
// segments of a long run (model/gpu_checks.h) without CUDA headers.
enum ApiCallFlags : uint8_t {
  kApiCallLaunch = 1,  // a successful launch-like call (REFERENCE.md section 1: kernels, graphs)
  // Queued into a stream under capture, as the API callback saw it (a capture begun before a
  // window counts too; bit 4 is collector/host/api_records.h's): its work went into a graph.
  kApiCallCaptured = 2,
};

// Name of an API (domain, cbid) pair, so that exporters need no CUDA headers. One per distinct
// (domain, cbid) seen in the profile (Profile::api_names).
struct ApiName {
  uint16_t cbid;
  ApiDomain domain;
  uint8_t pad0;
  StringId name;
};
static_assert(sizeof(ApiName) == 8);

// ---- Native call stacks on CUDA API calls (GPROF_BACKTRACE, docs/STACKS.md) ----------------

// Most frames one stack holds (innermost first); deeper stacks are cut at the outermost end.
inline constexpr uint32_t kMaxStackDepth = 32;
inline constexpr uint32_t kNoStack = 0xffffffffu;

// One distinct stack: `depth` return addresses at Profile::stack_pcs[first_pc ...], innermost
// first, as the process saw them (absolute addresses; Profile::modules places them). 8 bytes.
struct NativeStack {
  uint32_t first_pc;
  uint32_t depth;  // 1..kMaxStackDepth
};
static_assert(sizeof(NativeStack) == 8);

// The stack of one API call, by its correlation id (unique per call, so this survives every
// reordering and cut of Profile::api_calls). Calls without an entry have no stack. 8 bytes.
struct ApiStackRef {
  uint32_t correlation_id;
  uint32_t stack;  // index into Profile::stacks (never kNoStack in a stored profile)
};
static_assert(sizeof(ApiStackRef) == 8);

// A loaded ELF module at the time the profile was saved (dl_iterate_phdr): where its PT_LOAD
// segments sit and its load bias, so that an address maps to (module, file address). 32 bytes.
struct ModuleInfo {
  StringId path;      // absolute path as the dynamic loader knows it (the executable resolved)
  StringId build_id;  // hex of the NT_GNU_BUILD_ID note, or kNoString
  uint64_t bias;      // load bias: file (ELF) address = pc - bias
  uint64_t start;     // lowest mapped address of its PT_LOAD segments
  uint64_t end;       // one past the highest
};
static_assert(sizeof(ModuleInfo) == 32);

// Stack capture losses and totals (one per profile). 16 bytes.
struct StackCounters {
  uint64_t captured = 0;  // API calls that got a stack record
  uint64_t dropped = 0;   // stack records dropped (host buffer full): those calls show no stack
};
static_assert(sizeof(StackCounters) == 16);

// One native stack sample of a program thread (--cpu-sampling, docs/CPU_SAMPLING.md): when, on
// which thread, its stack (index into Profile::stacks, shared with the API calls') and the CPU
// time it stands for (the perf period; for the timer, the process's CPU time since the previous
// sample: ITIMER_PROF fires at most once per scheduler tick, whatever the rate asked). 24 bytes.
struct CpuSample {
  uint64_t time_ns;  // CLOCK_REALTIME, CUPTI's clock
  uint32_t tid;
  uint32_t stack;
  uint64_t cpu_ns;
};
static_assert(sizeof(CpuSample) == 24);

// How the samples were taken, and what was lost (one per profile; counts are the profile's own).
// 24 bytes.
struct CpuSampleCounters {
  uint32_t hz = 0;       // the requested rate (0: sampling was off)
  uint32_t backend = 0;  // CpuSampleBackendUsed
  uint64_t taken = 0;    // samples kept in this profile
  uint64_t dropped = 0;  // samples lost (full queue, full perf ring, failed unwind)
};
static_assert(sizeof(CpuSampleCounters) == 24);
// kCpuSamplesPerf: perf_event_open read in process; kCpuSamplesPerfProcess (3, newer dumps):
// read by the sampler process. Readers name an unknown value as no backend.
enum CpuSampleBackendUsed : uint32_t {
  kCpuSamplesOff = 0,
  kCpuSamplesPerf = 1,
  kCpuSamplesTimer = 2,
  kCpuSamplesPerfProcess = 3,
};

// ---- GPU side -------------------------------------------------------------------------------

// Launch attributes shared by many kernel executions, interned so that each Kernel record stays
// small (Profile::launch_configs).
struct LaunchConfig {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t registers_per_thread;
  uint32_t static_shared_bytes;
  uint32_t dynamic_shared_bytes;
  uint32_t context_id;
  uint32_t graph_id;       // 0 when not launched from a graph
  uint32_t device_id;
  uint64_t graph_node_id;  // 0 when not launched from a graph
};
static_assert(sizeof(LaunchConfig) == 56);

// One kernel execution. 32 bytes.
struct Kernel {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation_id;
  StringId name;           // mangled name as reported by CUPTI
  uint32_t launch_config;  // index into Profile::launch_configs
  uint32_t stream_id;      // device id is in the launch config
};
static_assert(sizeof(Kernel) == 32);

enum class CopyKind : uint8_t {  // mirrors CUpti_ActivityMemcpyKind
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7,
  kDtoD = 8, kHtoH = 9, kPtoP = 10,
};
enum class MemKind : uint8_t {  // mirrors CUpti_ActivityMemoryKind
  kUnknown = 0, kPageable = 1, kPinned = 2, kDevice = 3, kArray = 4, kManaged = 5,
  kDeviceStatic = 6, kManagedStatic = 7,
};

// A memcpy (including peer copies). 48 bytes.
struct Memcpy {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint32_t correlation_id;
  uint32_t stream_id;
  uint32_t context_id;
  uint8_t device_id;
  CopyKind kind;
  MemKind src_kind;
  MemKind dst_kind;
  uint8_t src_device;  // peer copies only (else == device_id)
  uint8_t dst_device;
  uint8_t is_async;
  uint8_t pad0;
  uint32_t pad1;
};
static_assert(sizeof(Memcpy) == 48);

// A memset. 40 bytes.
struct Memset {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint32_t correlation_id;
  uint32_t stream_id;
  uint32_t value;
  uint8_t device_id;
  MemKind mem_kind;
  uint8_t is_async;
  uint8_t pad0;
};
static_assert(sizeof(Memset) == 40);

enum class SyncKind : uint8_t {  // mirrors CUpti_ActivitySynchronizationType
  kUnknown = 0, kEventSynchronize = 1, kStreamWaitEvent = 2, kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// A host-side synchronization as reported by CUPTI's SYNCHRONIZATION activity. 32 bytes.
struct Sync {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation_id;
  uint32_t stream_id;   // 0xffffffff when not stream-specific
  uint32_t context_id;
  SyncKind kind;
  uint8_t pad0[3];
};
static_assert(sizeof(Sync) == 32);

enum class MemoryOpKind : uint8_t { kAlloc = 1, kFree = 2 };

// A device/pinned allocation or free (CUPTI MEMORY2). 40 bytes.
struct MemoryOp {
  uint64_t ts_ns;
  uint64_t address;
  uint64_t bytes;
  uint32_t correlation_id;
  uint32_t stream_id;   // 0xffffffff for synchronous allocations
  MemoryOpKind op;
  MemKind mem_kind;
  uint8_t device_id;
  uint8_t is_async;     // stream-ordered (cudaMallocAsync / pools)
  uint32_t pad0;
};
static_assert(sizeof(MemoryOp) == 40);

enum class OverheadKind : uint8_t {  // subset of CUpti_ActivityOverheadKind we name
  kUnknown = 0, kDriverCompiler = 1, kActivityBuffer = 2, kInstrumentation = 3, kResource = 4,
  kRuntimeTrigger = 5, kLazyFunctionLoad = 6, kCommandBuffer = 7, kActivityBufferRequest = 8,
  kOther = 255,
};

// CUPTI's own overhead (buffer requests, compilation, ...). 24 bytes.
struct Overhead {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t tid;  // thread the overhead ran on (0 when device-side)
  OverheadKind kind;
  uint8_t pad0[3];
};
static_assert(sizeof(Overhead) == 24);

// A step found by step detection (schedule windows). Shown as ProfilerStep#N. 24 bytes.
struct Step {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t number;  // N in ProfilerStep#N
  uint32_t tid;     // host thread the step boundary was seen on
};
static_assert(sizeof(Step) == 24);

// One thread's CPU time at one moment (collector/lifecycle/thread_cpu.h: sampled on gprof-run's
// own thread, from /proc/self/task/<tid>/schedstat). Both counters are cumulative since the
// thread started; the analysis takes differences between samples (analysis/attribution/
// thread_cpu.h). 32 bytes.
struct ThreadCpuSample {
  uint64_t ts_ns;    // when it was read
  uint64_t cpu_ns;   // time the thread ran on a CPU
  uint64_t wait_ns;  // time it was ready to run but waited for a CPU (0 when not known)
  uint32_t tid;
  uint32_t pad0;
};
static_assert(sizeof(ThreadCpuSample) == 32);

// ---- Process-level descriptions -------------------------------------------------------------

struct ThreadInfo {
  uint32_t tid;
  StringId name;  // from nvtxNameOsThread, or kNoString
};
static_assert(sizeof(ThreadInfo) == 8);

struct DeviceInfo {
  uint32_t id;
  StringId name;
  uint64_t total_global_mem;
  uint32_t compute_major;
  uint32_t compute_minor;
  uint32_t num_sms;
  uint32_t max_threads_per_block;
  uint32_t max_threads_per_sm;
  uint32_t max_registers_per_block;
  uint32_t max_registers_per_sm;
  uint32_t max_shared_memory_per_block;
  uint32_t max_shared_memory_per_sm;
  uint32_t warp_size;
};
static_assert(sizeof(DeviceInfo) == 56);

template <typename T>
inline constexpr bool kIsRecord = std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>;

}  // namespace gprof
