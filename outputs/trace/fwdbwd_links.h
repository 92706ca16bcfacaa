// torch.profiler's forward-to-backward links, rebuilt from the torch ops' sequence numbers
// (HostRange::seq, the ", seq = N" of torch's NVTX observer): Kineto writes one "fwdbwd" flow
// (cat and name "fwdbwd", "s" on the forward op, "f" with "bp":"e" on the backward op) per
// autograd node whose forward op it saw, and gives every op with a sequence number the args
// "Sequence number" and "Fwd thread id" (0 on a forward op). Which ops it links, as torch 2.15's
// own trace of a Linear's forward and backward shows them:
// - a backward op is "autograd::engine::evaluate_function: X" and the op X inside it with the
//   same sequence number (e.g. MmBackward0); the flow ends at X, the inner one. torch 2.15's NVTX
//   observer gives the outer one no sequence number: then X's own is used;
// - the forward op is, of the other ops with that sequence number, the one that started last
//   before the backward op (aten::mm inside aten::matmul, both numbered alike);
// - torch keys them by its forward thread id, which the NVTX text does not carry: a forward op
//   on the backward op's own thread is taken first (the CPU's autograd runs there), else the one
//   of any thread that started last (the GPU's autograd threads). Sequence numbers count per
//   thread, so two threads running forwards together could be linked wrongly there.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/profile.h"

namespace gprof {

struct FwdBwdEnd {
  uint32_t flow = 0;      // 1, 2, ... in the order of the backward ops' starts
  bool forward = false;   // the flow's "s" end (the forward op), else its "f" end
  uint32_t fwd_tid = 0;   // the forward op's thread (on the backward end)
};

// By index into p.ranges: the ops that start or end a fwdbwd flow. Empty when no torch op
// carries a sequence number (torch's ITT observer, or no torch at all).
std::unordered_map<uint32_t, FwdBwdEnd> FwdBwdLinks(const Profile& p);

// The prefix torch gives the backward op that runs an autograd node.
inline constexpr const char* kEvaluateFunctionPrefix = "autograd::engine::evaluate_function: ";

}  // namespace gprof
