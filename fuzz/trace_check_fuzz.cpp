// libFuzzer target: the trace checker (`gprof-run check`, outputs/trace/trace_check.h CheckTraceText)
// on arbitrary bytes: it reads traces from anyone (our own, torch.profiler's, nsys exports).
// Invariants, not only "no crash" (fuzz/fuzz_check.h):
//  - every violation names its rule and says what is wrong (non-empty rule and message);
//  - what is not JSON, or is JSON without events (neither an array nor an object with a
//    traceEvents array), is reported: a check that says nothing about a file Perfetto cannot
//    open would tell the user it is fine;
//  - the check is a function of the bytes (the same input twice gives the same violations).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "outputs/trace/trace_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<gprof::TraceViolation> v = gprof::CheckTraceText(text);
  for (const gprof::TraceViolation& x : v) {
    GPROF_FUZZ_CHECK(!x.rule.empty());
    GPROF_FUZZ_CHECK(!x.message.empty());
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const bool has_events =
      doc.is_array() ||
      (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array());
  if (doc.is_discarded() || !has_events) GPROF_FUZZ_CHECK(!v.empty());
  const std::vector<gprof::TraceViolation> again = gprof::CheckTraceText(text);
  GPROF_FUZZ_CHECK(again.size() == v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    GPROF_FUZZ_CHECK(again[i].rule == v[i].rule && again[i].message == v[i].message);
  }
  return 0;
}
