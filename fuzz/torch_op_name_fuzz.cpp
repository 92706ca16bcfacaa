// libFuzzer target: torch's NVTX op-range names (model/torch_op_name.h), which the collector
// splits into op name, sequence number, op id and shapes: any program can push any range name.
// Invariants, not only "no crash" (fuzz/fuzz_check.h), each a promise of torch_op_name.h:
//  - a text that is not an op range leaves `out` untouched;
//  - an accepted one: the name is a non-empty leading part of the text (a view into it), the
//    shapes a bracketed part of it, seq is -1 (absent) or a real sequence number (>= 0), and
//    cpu_op is IsTorchCpuOpName(name);
//  - the parts put back together the way torch writes them (getNvtxStr: NAME, seq, op_id,
//    sizes) parse back to the same parts, when the text names each field once (a name that
//    itself holds ", seq = " and the like is not one torch writes, and which copy the parser
//    takes is then not a promise).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "model/torch_op_name.h"

namespace {

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool Inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const char kSentinel[] = "untouched";
  gprof::TorchOpName name;
  name.name = kSentinel;
  name.op_id = 77;
  name.seq = 78;
  const bool is_op = gprof::ParseTorchOpName(text, &name);
  const bool cpu = gprof::IsTorchCpuOpName(text);
  (void)cpu;
  if (!is_op) {
    GPROF_FUZZ_CHECK(name.name.data() == kSentinel && name.op_id == 77 && name.seq == 78);
    return 0;
  }
  GPROF_FUZZ_CHECK(!name.name.empty());
  GPROF_FUZZ_CHECK(name.name.data() == text.data() && name.name.size() < text.size());
  GPROF_FUZZ_CHECK(name.seq >= -1);
  GPROF_FUZZ_CHECK(name.cpu_op == gprof::IsTorchCpuOpName(name.name));
  if (!name.shapes.empty()) {
    GPROF_FUZZ_CHECK(Inside(name.shapes, text));
    GPROF_FUZZ_CHECK(name.shapes.front() == '[' && name.shapes.back() == ']');
  }
  // op_id 0 reads as absent, so a text with only "op_id = 0" has nothing to write back.
  if (name.seq < 0 && name.op_id == 0) return 0;
  for (std::string_view field : {"seq = ", "op_id = ", "sizes = ", "input_op_ids = "}) {
    if (Count(text, field) > 1) return 0;
  }
  std::string rebuilt(name.name);
  if (name.seq >= 0) rebuilt += ", seq = " + std::to_string(name.seq);
  if (name.op_id != 0) rebuilt += ", op_id = " + std::to_string(name.op_id);
  if (!name.shapes.empty()) rebuilt += ", sizes = " + std::string(name.shapes);
  gprof::TorchOpName again;
  GPROF_FUZZ_CHECK(gprof::ParseTorchOpName(rebuilt, &again));
  GPROF_FUZZ_CHECK(again.name == name.name && again.seq == name.seq &&
                   again.op_id == name.op_id && again.shapes == name.shapes &&
                   again.cpu_op == name.cpu_op);
  return 0;
}
