// The merged table of `gprof-run merge` (step 4 of the merge, analysis/ranks/merge.h): the rows
// across inputs (MergeRows) as text. Launcher process only.
#pragma once

#include <string>
#include <vector>

#include "analysis/ranks/merge.h"

namespace gprof {

// Fixed-width text: a title naming the inputs and the window, one line per row (at most
// `row_limit`: TableOptions::row_limit's meaning) with Calls, Self CUDA, Self CPU and CPU total as min / median / max and
// the rank (or host:pid) of the max, then the sum of each column's totals.
std::string FormatMergedTable(const std::vector<MergeInput>& inputs, const std::string& title,
                              int row_limit);

}  // namespace gprof
