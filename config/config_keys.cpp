// The GPROF_* key table (config.h ConfigKeys): every key, its type, default and help text.
#include <vector>

#include "config/config.h"

namespace gprof {

// Built on first use and never destroyed: this file is linked into the injection library, which
// must have no global constructors or destructors (it may be preloaded).
const std::vector<ConfigKey>& ConfigKeys() {
  static const auto* keys = new std::vector<ConfigKey>{
    {"GPROF_OUTPUT_DIR", ConfigType::kString, "",
     "Directory the injection library writes its dumps into (the launcher sets it from -o)."},
    {"GPROF_LOG_LEVEL", ConfigType::kEnum, "warn",
     "trace|debug|info|warn|error|off: what gprof prints to stderr inside the program."},
    {"GPROF_CUDA", ConfigType::kBool, "1",
     "1|0: collect CUDA API calls and GPU activity through CUPTI."},
    {"GPROF_NVTX", ConfigType::kBool, "1", "1|0: collect NVTX ranges and marks."},
    {"GPROF_API_FILTER", ConfigType::kSpec, "default",
     "default|all|none, then ,+NAME or ,-NAME to add or drop single APIs "
     "(e.g. default,+cudaGetDevice,-cudaEventQuery). default drops polling and getter calls."},
    {"GPROF_BACKTRACE", ConfigType::kSpec, "sync,alloc",
     "none, or a comma list of sync, alloc, memcpy, launch: the CUDA API calls of those groups "
     "carry the program's native call stack (frame pointers; trace args.stack, `gprof-run stats "
     "--report cuda_api_stack_sum`; docs/STACKS.md)."},
    {"GPROF_ACTIVITY_BUFFER_KIB", ConfigType::kUint, "256",
     "Size of one CUPTI activity buffer in KiB (64..262144; small ones come back sooner)."},
    {"GPROF_ACTIVITY_POOL", ConfigType::kUint, "2048",
     "Most CUPTI activity buffers outstanding at once (2..65536). When all are in use, CUPTI "
     "drops records and the drop is counted and reported."},
    {"GPROF_PENDING_MIB", ConfigType::kUint, "256",
     "Most memory for GPU records not yet written, in MiB (1..65536): the CUPTI buffers CUPTI "
     "holds (a buffer comes back only once all its work has finished, so a program whose host "
     "runs ahead of the GPU fills them) and the decoded records waiting for the next segment. "
     "Past it buffer requests are refused: CUPTI drops those records, and the drop is counted "
     "and reported."},
    {"GPROF_HOST_BUFFER_MIB", ConfigType::kUint, "512",
     "Most memory for host events (NVTX, API calls) per process, in MiB (1..65536). Events past "
     "it are dropped and counted."},
    {"GPROF_SEGMENT_SECONDS", ConfigType::kUint, "10",
     "A whole run writes its dump in segments during the run (0..86400): one every N seconds "
     "and whenever the host buffer is half full or 64 MiB of GPU records wait, so memory stays "
     "bounded however long the run, and a killed program leaves its completed segments. 0: one "
     "segment at exit (GPU records then accumulate in memory until exit)."},
    {"GPROF_CUPTI_LIB", ConfigType::kString, "",
     "Path of the libcupti to use. Default search: a libcupti already loaded, the toolkit gprof "
     "was built with, $CUDA_HOME, then pip's nvidia-cuda-cupti wheels."},
    {"GPROF_SCHEDULE", ConfigType::kSpec, "",
     "torch.profiler schedule: skip_first=N,wait=N,warmup=N,active=N,repeat=N (any subset; "
     "active>=1 turns windows on; repeat=0 cycles until exit)."},
    {"GPROF_STEP", ConfigType::kSpec, "nvtx:ProfilerStep*",
     "What ends a step: nvtx:GLOB (range or mark name), kernel:REGEX (each launch), api:NAME "
     "(each call, e.g. api:cudaStreamSynchronize), time:DURATION (e.g. time:100ms)."},
    {"GPROF_CAPTURE_RANGE", ConfigType::kEnum, "none",
     "none|cudaProfilerApi|nvtx: collect only inside these ranges (as nsys --capture-range)."},
    {"GPROF_NVTX_CAPTURE", ConfigType::kString, "",
     "NAME[@DOMAIN]: the NVTX range that opens a capture when GPROF_CAPTURE_RANGE=nvtx."},
    {"GPROF_CAPTURE_RANGE_END", ConfigType::kSpec, "stop",
     "stop|repeat[:N]: after the first capture range stop collecting, or capture every range "
     "(at most N)."},
    {"GPROF_DELAY", ConfigType::kSpec, "0",
     "Collect nothing for this long after start (e.g. 2s, 500ms)."},
    {"GPROF_DURATION", ConfigType::kSpec, "0", "Stop collecting after this long (0 = no limit)."},
    {"GPROF_START_PAUSED", ConfigType::kBool, "0",
     "1|0: collect nothing until `gprof-run capture` or `gprof-run resume` asks for it over the "
     "control socket (docs/ATTACH.md); each capture is its own profile."},
    {"GPROF_SESSION", ConfigType::kString, "",
     "Name of this process for `gprof-run capture|pause|resume|sessions` (letters, digits, . _ "
     "-; at most 64; default: the program's name)."},
    // Read by the Python hook (python/gprof_run_hook/) in torch programs; parsed here so that the
    // launcher rejects a bad value before the program starts.
    {"GPROF_TORCH_OPS", ConfigType::kBool, "1",
     "1|0: in a Python program that imports torch, record torch's own per-op ranges (aten::mm, "
     "autograd, optimizer) on every thread that runs ops."},
    {"GPROF_RECORD_SHAPES", ConfigType::kBool, "0",
     "1|0: torch ops carry their input shapes (the table gains torch's Input Shapes column and "
     "groups by name and shapes)."},
    {"GPROF_TORCH_ITT", ConfigType::kBool, "1",
     "1|0: torch op ranges through torch's ITT observer (names only, cheapest; the launcher "
     "points INTEL_LIBITTNOTIFY64 at gprof-run's library) rather than its NVTX one (also "
     "sequence numbers and op ids). --record-shapes always uses NVTX."},
    {"GPROF_TORCH_MEMORY", ConfigType::kBool, "0",
     "1|0: in a Python program that uses torch on CUDA, record its caching allocator's "
     "allocations and frees from CUDA initialization on (torch.cuda.memory's history) into "
     "<program>.<pid>.torchmem, for the table's memory columns; set by --profile-memory "
     "(docs/PYTORCH.md)."},
    {"GPROF_TORCH_STEPS", ConfigType::kEnum, "optimizer",
     "optimizer|off: in a torch program, each optimizer.step() ends a step (ProfilerStep#N), "
     "unless the program has steps of its own (docs/PYTORCH.md)."},
    {"GPROF_PYTHON_SAMPLING", ConfigType::kUint, "0",
     "0|1..2000: in a Python program, sample every thread's Python stack this many times a "
     "second (0 = off) into <program>.<pid>.pysamples; the report adds <stem>.stacks.folded and "
     "python_function slices in the trace (docs/PYTHON_SAMPLING.md)."},
    {"GPROF_PYTHON_SAMPLER", ConfigType::kEnum, "auto",
     "auto|in-process: how --python-sampling reads the stacks: auto reads a CPython 3.11 "
     "process's stacks from a sampler process of its own, without the program's GIL, and "
     "falls back to a sampler thread inside the program (in-process) where it cannot "
     "(docs/PYTHON_SAMPLING.md)."},
    {"GPROF_CPU_SAMPLING", ConfigType::kUint, "0",
     "0|1..20000: sample every program thread's native stack this many times a second of its "
     "CPU time (0 = off): cpu_sample slices in the trace, stats report cpu_sample_sum, "
     "<stem>.cpu.folded, and gpu_idle names the host functions in its gaps "
     "(docs/CPU_SAMPLING.md)."},
    {"GPROF_CPU_SAMPLING_BACKEND", ConfigType::kEnum, "auto",
     "auto|process|perf|timer: how GPROF_CPU_SAMPLING samples: perf_event_open from a sampler "
     "process outside the program (process), from a thread inside it (perf), or an ITIMER_PROF "
     "signal (timer); auto takes the first that perf_event_paranoid and ptrace access allow "
     "(docs/CPU_SAMPLING.md)."},
    {"GPROF_CPU_SAMPLER_PROCESS", ConfigType::kEnum, "auto",
     "auto|refuse: refuse makes --cpu-sampling's sampler process answer as if the kernel "
     "refused it (perf_event_paranoid, ptrace access), to check the in-process fallback "
     "(docs/CPU_SAMPLING.md)."},
  };
  return *keys;
}

}  // namespace gprof
