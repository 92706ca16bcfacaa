// How much CPU each program thread used between two moments, from the thread CPU samples of the
// profile (Profile::thread_cpu, collector/lifecycle/thread_cpu.h: a round over every thread every
// 10 ms, and at the run's start and end and at every dump or window written). Between two rounds
// a thread's counters are taken to grow evenly, so a step's or window's edge falls between them
// by linear interpolation (up to one period of error at each edge, none when an edge is a round).
// Launcher process only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct ThreadCpu {
  uint64_t cpu_ns = 0;   // time the thread ran
  uint64_t wait_ns = 0;  // time it was ready to run but waited for a CPU (0 where not known)
  // Running or ready to run: the time the thread wanted a CPU, as opposed to sleeping or
  // blocked. On a machine where other processes hold the CPUs, a thread that computes all the
  // time still has this near the whole span while its cpu_ns is only its share of a CPU.
  uint64_t runnable_ns() const { return cpu_ns + wait_ns; }
};

class ThreadCpuIndex {
 public:
  explicit ThreadCpuIndex(const Profile& p);
  bool empty() const { return by_thread_.empty(); }
  // What thread `tid` used in [start, end), at most the span's length in all (the kernel's
  // counters move in steps, at scheduling events); none when the samples do not cover the span
  // (no sample of the thread, or the span reaches past the first or last round). A thread first seen
  // after the first round started between the two rounds around its first sample (it counts
  // from zero there); one last seen before the last round ended after its last sample.
  std::optional<ThreadCpu> In(uint32_t tid, uint64_t start, uint64_t end) const;

 private:
  // The thread's counters at `t`, interpolated; none outside the samples' reach.
  std::optional<ThreadCpu> At(const std::vector<ThreadCpuSample>& s, uint64_t t) const;

  std::map<uint32_t, std::vector<ThreadCpuSample>> by_thread_;  // by time
  std::vector<uint64_t> rounds_;  // every sampling time, sorted, unique
};

}  // namespace gprof
