// Rank dumps for the merge benchmarks (figures 17 and 18): the mixed workload (bench/workload.h)
// plus a "gloo:all_reduce" range ending with each step, written as rank r of N: pid 30000 + r on
// host node<r / 8>, its clock r ms ahead.
#pragma once

#include <cstdint>
#include <string>

#include "model/profile.h"

namespace gprof::bench {

// The ranks' common profile of about `events` records (1.97 per call, merge_bench.cpp).
Profile RankBaseProfile(uint64_t events);

// Writes `base` as rank `r` of `ranks` to `path` (`base` is restored after): one segment
// (WriteDump) when `segments` is 1, else `segments` segments (SegmentedDumpWriter) of equal time
// spans, each record in the span its start falls in. Exits with a message when it cannot.
void WriteRankDump(Profile* base, int r, int ranks, const std::string& path, int segments = 1);

}  // namespace gprof::bench
