// The name TensorBoard's profiler plugin looks for: it lists only files named
// <worker>[.<span>].pt.trace.json[.gz] (torch_tb_profiler 0.4.3, consts.WORKER_PATTERN, the
// names torch.profiler.tensorboard_trace_handler writes), and finds them in any folder under its
// --logdir. gprof-run keeps its trace.json and puts a relative symbolic link of that name in the
// folder tensorboard/ next to it, so `tensorboard --logdir <outdir>` finds the run
// (docs/PYTORCH.md), and the output folder's own *.trace.json files stay what they were.
#pragma once

#include <string>

namespace gprof::launcher {

// The worker name of a dump's trace: the plugin reads <worker>.<digits>.pt.trace.json as span
// <digits> of <worker>, so a process's dump <program>.<pid> would make every process of a run one
// worker. A stem ending in .<pid> becomes torch.profiler.tensorboard_trace_handler's default
// worker, <hostname>_<pid> (<program>_<pid> without a host name): one worker per process, which
// the plugin's distributed view splits into node and process (consts.NODE_PROCESS_PATTERN).
// Other stems (a window's <program>.<pid>.cycleC.stepsA-B) are kept.
std::string TensorBoardWorker(const std::string& stem, const std::string& hostname);

// The link's file name for a trace of `worker` written to `trace_path` (".gz" kept):
// "<worker>.pt.trace.json" or "<worker>.pt.trace.json.gz".
// The folder, under the trace's.
inline constexpr const char* kTensorBoardDir = "tensorboard";

std::string TensorBoardLinkName(const std::string& worker, const std::string& trace_path);

// Creates <dir of trace_path>/tensorboard/TensorBoardLinkName(worker, trace_path) ->
// ../<the trace's file name> (relative, so the output folder can be moved), and the folder if
// needed. An old link of that name is replaced; anything else of that name, and a tensorboard
// that is not a folder, are left alone. Returns "" or what went wrong, in a user's words.
std::string LinkTraceForTensorBoard(const std::string& worker, const std::string& trace_path);

// Removes the link LinkTraceForTensorBoard made for (worker, trace_path), when it is one (a file
// of that name that is not a symbolic link is left alone). For a distributed run's processes
// without a rank (the launcher: torchrun, mpirun): its tensorboard/ then holds the ranks' traces
// only, as torch.profiler writes one file per rank, and HTA, which reads every .json file of the
// folder and takes one without a rank for rank 0, maps each file to its own rank.
void UnlinkTraceForTensorBoard(const std::string& worker, const std::string& trace_path);

}  // namespace gprof::launcher
