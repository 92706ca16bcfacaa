// Lane packing for trace tracks (launcher process only). Perfetto requires slices on one
// (pid, tid) track to nest; work that does not nest (concurrent copies, annotations of two
// threads on one stream, start/end ranges crossing push/pop ranges) must go to its own track.
#pragma once

#include <cstdint>
#include <vector>

namespace gprof {

struct LaneInterval {
  uint64_t start;
  uint64_t end;
  uint8_t order;  // at equal (start, end), lower order is the parent
  uint32_t id;    // caller's handle; also the final tiebreak
};

// Lane (0, 1, ...) for each interval, in input order: the lowest lane where the interval nests
// with everything already placed there (intervals are placed by start, longest first).
std::vector<uint32_t> PackNestedLanes(const std::vector<LaneInterval>& intervals);

}  // namespace gprof
