// libFuzzer target: the .pysamples reader (analysis/samples/python_samples.h ParsePythonSamples) and,
// for every file it accepts, what the report makes of it: the folded stacks and the
// python_function slices in a trace. A samples file is written inside the profiled program, so
// anyone can hand gprof-run a hostile one. Invariants, not only "no crash": every slice lies in
// the range and nests on its track (the trace passes CheckTraceText), and the folded stacks
// count exactly the samples in the range.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/samples/python_samples.h"
#include "analysis/samples/python_slices.h"
#include "fuzz/fuzz_check.h"
#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gprof::PythonSamples s;
  std::string error;
  if (!gprof::ParsePythonSamples(text, &s, &error)) {
    GPROF_FUZZ_CHECK(!error.empty());
    return 0;
  }
  // The range: the sampler's own span, cut in the middle third (as a window dump's would be).
  const uint64_t span = s.end_ns > s.start_ns ? s.end_ns - s.start_ns : 0;
  const uint64_t from = s.start_ns + span / 3, to = s.start_ns + 2 * (span / 3);
  uint64_t counted = 0;
  (void)gprof::FoldedStacks(s, from, to, &counted);
  const gprof::PythonSliceSet set = gprof::PythonSlicesFrom(s, from, to);
  GPROF_FUZZ_CHECK(counted == set.samples_used);
  for (const gprof::PythonSlice& slice : set.slices) {
    GPROF_FUZZ_CHECK(from <= slice.ts && slice.ts <= slice.end && slice.end <= to);
  }
  gprof::Profile p;
  p.info.pid = s.pid;
  p.info.start_ns = from;
  p.info.end_ns = to;
  const std::string trace = gprof::FormatTraceJson(p, "trace.json", &set);
  GPROF_FUZZ_CHECK(gprof::CheckTraceText(trace).empty());
  return 0;
}
