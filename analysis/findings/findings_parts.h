// The findings of a long run analysed part by part (launcher/render/segmented_render.h: a dump
// rendered segment by segment has its findings made one part of about a million launches at a
// time, so that memory holds one part). Each part's findings (FindFindings of that part alone)
// are added; for each subject (a finding's id and the device, stream or name of its place:
// gpu_idle of GPU 1 and kernel_spread of one kernel are subjects of their own) the finding of
// the part where it would save the most is kept (then the most severe, then the earliest part),
// with two more numbers of evidence when there were several parts: "parts_seen", the parts that
// found it, and "parts", how many parts were analysed. Its window, shares and places are that
// part's; places are moved onto the run's trace time. Pure; launcher process only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"

namespace gprof {

class PartFindings {
 public:
  // `found`: one part's findings; `shift_ns`: that part's trace origin minus the run's (what its
  // places' times gain on the run's trace).
  void AddPart(std::vector<Finding> found, uint64_t shift_ns);
  // The kept findings, ordered as FindFindings orders them (largest saving first).
  std::vector<Finding> Take();
  uint32_t parts() const { return parts_; }

 private:
  struct Kept {
    Finding finding;
    uint32_t seen = 0;
  };
  uint32_t parts_ = 0;
  std::map<std::string, Kept> kept_;  // by subject
  std::vector<std::string> order_;    // subjects in the order first found
};

}  // namespace gprof
