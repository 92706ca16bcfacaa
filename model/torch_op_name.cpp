// ParseTorchOpName / IsTorchCpuOpName (see torch_op_name.h).
#include "model/torch_op_name.h"

namespace gprof {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

uint64_t Digits(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

// When `s` ends in KEY followed by a bracketed list ("[...]" to the end), cuts it off `s` and
// returns the list; else empty. The list's own brackets may nest, so the last KEY is taken.
std::string_view CutList(std::string_view* s, std::string_view key) {
  const size_t at = s->rfind(key);
  if (at == std::string_view::npos) return {};
  const std::string_view list = s->substr(at + key.size());
  if (list.size() < 2 || list.front() != '[' || list.back() != ']') return {};
  *s = s->substr(0, at);
  return list;
}

// When `s` ends in KEY DIGITS, cuts it off and stores the number.
bool CutNumber(std::string_view* s, std::string_view key, uint64_t* value) {
  const size_t at = s->rfind(key);
  if (at == std::string_view::npos) return false;
  const std::string_view digits = s->substr(at + key.size());
  if (!AllDigits(digits)) return false;
  *value = Digits(digits);
  *s = s->substr(0, at);
  return true;
}

}  // namespace

bool ParseTorchOpName(std::string_view text, TorchOpName* out) {
  std::string_view s = text;
  CutList(&s, ", input_op_ids = ");
  const std::string_view shapes = CutList(&s, ", sizes = ");
  uint64_t op_id = 0, seq = 0;
  const bool has_op_id = CutNumber(&s, ", op_id = ", &op_id);
  const bool has_seq = CutNumber(&s, ", seq = ", &seq);
  if (!has_op_id && !has_seq) return false;
  // torch's sequence number is an int64_t: 19 digits past INT64_MAX are not one of its ranges.
  if (has_seq && seq > static_cast<uint64_t>(INT64_MAX)) return false;
  if (s.empty()) return false;
  out->name = s;
  out->op_id = has_op_id ? op_id : 0;
  out->seq = has_seq ? static_cast<int64_t>(seq) : -1;
  out->shapes = shapes;
  out->cpu_op = IsTorchCpuOpName(s);
  return true;
}

bool IsTorchCpuOpName(std::string_view name) {
  if (name.find("::") != std::string_view::npos) return true;
  // The un-namespaced ops torch records under cpu_op (torch 2.15's torch.profiler trace of
  // `y.detach()` and `w.detach_()`: "cat": "cpu_op", names "detach" and "detach_").
  if (name == "detach" || name == "detach_") return true;
  // An autograd node: an identifier ending in "Backward" and a version number (MmBackward0).
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end == name.size()) return false;
  constexpr std::string_view kBackward = "Backward";
  if (end < kBackward.size() + 1 || name.substr(end - kBackward.size(), kBackward.size()) != kBackward)
    return false;
  for (size_t i = 0; i < end; ++i) {
    const char c = name[i];
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_';
    if (!word) return false;
  }
  return true;
}

}  // namespace gprof
