// PyTorch's NVTX op names, split into the op name and its details (pure; used by the collector's
// profile builder on the cold path, and by tests).
//
// With torch's NVTX profiler on (ProfilerState.NVTX: what emit_nvtx, Nsight Systems'
// --pytorch=autograd-nvtx and gprof-run's Python hook turn on), every RecordFunction pushes one
// NVTX range whose text torch builds in torch/csrc/profiler/util.cpp getNvtxStr():
//
//   NAME[, seq = N][, op_id = N][, sizes = [[2, 3], []]][, input_op_ids = [(1,0), (0,-1)]]
//
// (seq only for ops that autograd records, op_id for every range because the observer asks for
// ids, sizes and input_op_ids only with record_shapes). Seen on torch 2.15, e.g.
// "aten::detach, seq = 0, op_id = 2, sizes = [[3, 4]], input_op_ids = [(1,0)]" and
// "my_region, op_id = 12". Kept as they come, every op would be its own table row; torch.profiler
// names rows by NAME alone and shows the rest as trace args ("Sequence number",
// "Record function id", "Input Dims").
#pragma once

#include <cstdint>
#include <string_view>

namespace gprof {

struct TorchOpName {
  std::string_view name;    // NAME
  uint64_t op_id = 0;       // 0 = absent
  int64_t seq = -1;         // -1 = absent
  std::string_view shapes;  // "[[2, 3], []]" or empty when absent
  bool cpu_op = false;      // an operator (Kineto cpu_op) rather than a user annotation
};

// Splits `text` when it ends in torch's suffixes, read right to left: an optional
// ", input_op_ids = [...]" (dropped: it repeats op ids, not something a table or trace shows), an
// optional ", sizes = [...]", then ", op_id = DIGITS" and/or ", seq = DIGITS" — at least one of
// these two must be there, so a user's own range named "load, sizes = [3]" is left alone.
// Returns false (and leaves `out` untouched) when `text` is not a torch op range.
bool ParseTorchOpName(std::string_view text, TorchOpName* out);

// True when torch would file a range of this name under cpu_op rather than user_annotation.
// The NVTX text does not carry RecordFunction's scope, so this goes by the name: a namespaced
// operator ("aten::mm", "c10d::allreduce_", "autograd::engine::evaluate_function: MmBackward0",
// "prim::...", "cuda::..."), or an autograd node ("MmBackward0", "AccumulateGrad"). Everything
// else — record_function ranges such as "Optimizer.step#AdamW.step", "ProfilerStep#3",
// "Torch-Compiled Region: 0/0" — is a user annotation, but for the un-namespaced ops torch files
// under cpu_op ("detach", "detach_"; any other such name counts as an annotation).
bool IsTorchCpuOpName(std::string_view name);

}  // namespace gprof
