// Config: every GPROF_* setting, in one immutable struct, produced by one pure function from an
// environment map. The launcher runs ParseConfig on the environment it is about to hand the
// program (so a bad value fails before the program starts, exit 2); the injection library runs
// the same function inside the program and, on errors, warns and keeps the defaults.
//
// The key table (ConfigKeys(), config_keys.cpp) is the single list of keys, defaults and help text;
// `gprof-run --help-env` prints it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gprof {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Which CUDA API calls become ApiCall records.
struct ApiFilter {
  enum class Base { kDefault, kAll, kNone };
  Base base = Base::kDefault;
  std::vector<std::string> include;  // +name: always record (exact API name)
  std::vector<std::string> exclude;  // -name: never record
};

// torch.profiler.schedule semantics (REFERENCE.md §2). active == 0 means "no schedule": the
// whole run is one window.
struct Schedule {
  uint32_t skip_first = 0;
  uint32_t wait = 0;
  uint32_t warmup = 0;
  uint32_t active = 0;
  uint32_t repeat = 0;  // 0 = cycle until exit
  bool enabled() const { return active > 0; }
};

// What marks a step boundary in an unmodified program.
struct StepSource {
  enum class Kind { kNvtx, kKernel, kApi, kTime };
  Kind kind = Kind::kNvtx;
  std::string pattern = "ProfilerStep*";  // NVTX: glob on range/mark name; kernel: ECMAScript
                                          // regex on the name; api: exact API name
  uint64_t period_ns = 0;                 // kTime only
};

// nsys-style capture ranges, and captures asked for from outside (kControl: --start-paused, then
// `gprof-run capture|resume|pause`, collector/control/).
struct CaptureRange {
  enum class Kind { kNone, kCudaProfilerApi, kNvtx, kControl };
  Kind kind = Kind::kNone;
  std::string nvtx_name;    // --nvtx-capture NAME[@DOMAIN]: the NAME part
  std::string nvtx_domain;  // the DOMAIN part ("" = default domain)
  bool repeat = false;      // --capture-range-end=repeat[:N]
  uint32_t repeat_count = 0;  // 0 = unlimited when repeat
  uint64_t delay_ns = 0;      // --delay
  uint64_t duration_ns = 0;   // --duration (0 = until the end)
};

// How --cpu-sampling takes its samples: perf_event_open from a sampler process outside the
// program (kProcess), from a reader thread inside it (kPerf), or a CPU-time timer signal whose
// handler unwinds the interrupted thread (kTimer); kAuto takes the first the kernel allows.
enum class CpuSamplingBackend : uint8_t { kAuto, kPerf, kTimer, kProcess };

// Which CUDA API calls get a native call stack (GPROF_BACKTRACE, docs/STACKS.md): a bit per group.
enum BacktraceGroup : uint8_t {
  kBacktraceSync = 1 << 0,    // device/stream/event synchronize
  kBacktraceAlloc = 1 << 1,   // malloc/free of device, host-pinned and managed memory
  kBacktraceMemcpy = 1 << 2,  // memcpy and memset
  kBacktraceLaunch = 1 << 3,  // kernel launches
};

struct Config {
  std::string output_dir;  // where dumps go; "" = current directory
  LogLevel log_level = LogLevel::kWarn;
  bool cuda = true;        // collect CUDA API + GPU activity through CUPTI
  bool nvtx = true;        // collect NVTX ranges and marks
  // Python torch programs (read by the Python hook; the library only validates them).
  bool torch_ops = true;       // torch's per-op ranges (RecordFunction -> NVTX) on every thread
  bool record_shapes = false;  // ... with input shapes
  bool torch_memory = false;   // the caching allocator's events (the hook's .torchmem)
  bool torch_itt = true;       // ... through torch's ITT observer when shapes are off
  bool torch_steps = true;     // optimizer.step() ends a step
  // Python programs: sampled stacks (read by the Python hook; docs/PYTHON_SAMPLING.md).
  uint32_t python_sampling_hz = 0;  // 0 = off
  bool python_sampler_in_process = false;  // GPROF_PYTHON_SAMPLER=in-process: never out of process
  // Native stack samples of every program thread (docs/CPU_SAMPLING.md).
  uint32_t cpu_sampling_hz = 0;  // 0 = off
  CpuSamplingBackend cpu_sampling_backend = CpuSamplingBackend::kAuto;
  // GPROF_CPU_SAMPLER_PROCESS=refuse: the sampler process answers as if the kernel refused it,
  // to check the fallback where the kernel allows everything.
  bool cpu_sampler_process_refused = false;
  ApiFilter api_filter;
  uint8_t backtrace = kBacktraceSync | kBacktraceAlloc;  // BacktraceGroup bits; 0 = none
  uint32_t activity_buffer_kib = 256;      // size of one CUPTI activity buffer
  uint32_t activity_pool_buffers = 2048;   // max buffers outstanding at once (bounded pool)
  uint32_t host_buffer_mib = 512;           // cap on host-event memory per process
  uint32_t pending_mib = 256;               // cap on GPU records pending: CUPTI buffers held +
                                            // decoded records waiting for a segment
  uint32_t segment_seconds = 10;            // whole runs: a dump segment this often; 0 = at exit
  std::string cupti_lib;                    // explicit libcupti path ("" = search)
  Schedule schedule;
  StepSource step;
  CaptureRange capture;
  // --start-paused: collect nothing until a capture is asked for over the control socket
  // (capture.kind is then kControl); `session` names the process there ("" = its program name).
  bool start_paused = false;
  std::string session;
};

enum class ConfigType { kString, kBool, kUint, kEnum, kSpec };

struct ConfigKey {
  std::string_view name;       // GPROF_...
  ConfigType type;
  std::string_view default_value;
  std::string_view help;
};

// The single table of keys.
const std::vector<ConfigKey>& ConfigKeys();

struct ConfigError {
  std::string key;
  std::string value;
  std::string message;  // says what is allowed
};

struct ParseResult {
  Config config;
  std::vector<ConfigError> errors;    // invalid values (the default was kept for each)
  std::vector<std::string> warnings;  // unknown GPROF_* keys and the like
  bool ok() const { return errors.empty(); }
};

// Pure: reads only `env` (keys not starting with GPROF_ are ignored).
ParseResult ParseConfig(const std::map<std::string, std::string>& env);

// "GPROF_X=v: message" one-liners for printing.
std::string FormatError(const ConfigError& e);

// Helpers shared with the launcher's flag parsing.
bool ParseDurationNs(std::string_view text, uint64_t* ns);  // "1.5s", "200ms", "10us", "3" (s)
std::string_view LogLevelName(LogLevel level);

}  // namespace gprof
