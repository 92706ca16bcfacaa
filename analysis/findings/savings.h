// What fixing each finding would save (findings.h: Saving): one estimate per id, its method in
// docs/FINDINGS.md ("Estimated saving"). Internal to the findings: FindFindings calls
// EstimateSavings once all rules have run. A rule that sets its own Finding::saving (run_ns and
// method) keeps it; EstimateSavings then fills in step_ns and whole_ns. Launcher process only.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_analysis.h"

namespace gprof::findings_internal {

// Gives every finding of `findings` that has none an estimate by its id (ids it does not know get
// none), then per-step figures from the profile's steps.
void EstimateSavings(Analysis& a, std::vector<Finding>* findings);

// The pageable copies' saving at pinned bandwidth (exposed for its unit test): each async copy
// through pageable memory in the window at the bandwidth of the profile's pinned copies of the
// same kind, or at twice its own bandwidth when the profile has none.
uint64_t PageableAtPinnedSavingNs(Analysis& a);

}  // namespace gprof::findings_internal
