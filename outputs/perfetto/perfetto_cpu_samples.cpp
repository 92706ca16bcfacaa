// --cpu-sampling's samples in the Perfetto trace (see perfetto_writer.h): PerfSample packets with
// interned callstacks, frames, function names and mappings (profile_common.proto).
#include <algorithm>
#include <string>
#include <vector>

#include "outputs/perfetto/perfetto_writer.h"

namespace gprof::perfetto {
namespace {

// A module's build id as the raw bytes Perfetto's build_ids hold (the dump keeps it in hex);
// "" when unknown or not hex.
std::string RawBuildId(std::string_view hex) {
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string raw;
  if (hex.size() % 2 != 0) return raw;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return {};
    raw.push_back(static_cast<char>(hi << 4 | lo));
  }
  return raw;
}

}  // namespace

void PerfettoWriter::OrderCpuSamples() {
  if (cpu_ == nullptr) return;
  const uint64_t base = plan_.base_ns();
  for (uint32_t i = 0; i < p_.cpu_samples.size(); ++i) {
    const CpuSample& s = p_.cpu_samples[i];
    if (s.time_ns >= base && s.stack < cpu_->function.size() && s.stack < p_.stacks.size()) {
      cpu_order_.push_back(i);
    }
  }
  // The queue hands samples over per thread ring: sort by time (stable: ties keep their order).
  std::stable_sort(cpu_order_.begin(), cpu_order_.end(), [&](uint32_t a, uint32_t b) {
    return p_.cpu_samples[a].time_ns < p_.cpu_samples[b].time_ns;
  });
  callstack_interned_.assign(p_.stacks.size(), false);
  mapping_iids_.assign(p_.modules.size() + 1, 0);
}

void PerfettoWriter::WriteCpuSamplesUpTo(uint64_t ts) {
  if (cpu_ == nullptr) return;
  while (next_cpu_ < cpu_order_.size() && p_.cpu_samples[cpu_order_[next_cpu_]].time_ns <= ts) {
    const CpuSample& s = p_.cpu_samples[cpu_order_[next_cpu_++]];
    CloseSlicesUpTo(s.time_ns);  // the file stays in time order
    const size_t packet = packets_.Begin(kNeedsIncrementalState);
    enc_.AddVarint(f::kTimestamp, s.time_ns);
    if (!callstack_interned_[s.stack]) InternCallstack(s.stack);
    const size_t sample = enc_.BeginNested(f::kPerfSample);
    enc_.AddVarint(f::kSamplePid, p_.info.pid);
    enc_.AddVarint(f::kSampleTid, s.tid);
    enc_.AddVarint(f::kSampleCpuMode, kCpuModeUser);  // both backends unwind user stacks
    enc_.AddVarint(f::kSampleCallstack, uint64_t{s.stack} + 1);
    enc_.EndNested(sample);
    packets_.End(packet);
  }
}

void PerfettoWriter::InternedString(uint32_t field, uint64_t iid, std::string_view text) {
  const size_t m = enc_.BeginNested(field);
  enc_.AddVarint(f::kIid, iid);
  enc_.AddBytes(f::kInternedString, text);
  enc_.EndNested(m);
}

uint64_t PerfettoWriter::FunctionIid(const std::string& name) {
  auto [it, added] = function_iids_.try_emplace(name, function_iids_.size() + 1);
  if (added) InternedString(f::kFunctionNames, it->second, RepairUtf8(name));
  return it->second;
}

uint64_t PerfettoWriter::MappingIid(uint64_t pc, uint64_t* rel_pc) {
  size_t index = p_.modules.size();  // none: the last slot
  for (size_t i = 0; i < p_.modules.size(); ++i) {
    if (pc >= p_.modules[i].start && pc < p_.modules[i].end) {
      index = i;
      break;
    }
  }
  const ModuleInfo* module = index < p_.modules.size() ? &p_.modules[index] : nullptr;
  *rel_pc = module != nullptr ? pc - module->start : pc;
  uint64_t& iid = mapping_iids_[index];
  if (iid != 0) return iid;
  iid = ++mappings_interned_;  // its build id entry has the same iid
  // Its path as components ("/usr/lib/libc.so.6": usr, lib, libc.so.6), each interned once.
  const std::string path =
      module != nullptr ? std::string(p_.strings.Get(module->path)) : "[unknown]";
  std::vector<uint64_t> components;
  for (size_t at = 0; at <= path.size();) {
    const size_t slash = std::min(path.find('/', at), path.size());
    if (slash > at) {
      const std::string part = path.substr(at, slash - at);
      auto [it, added] = path_iids_.try_emplace(part, path_iids_.size() + 1);
      if (added) InternedString(f::kMappingPaths, it->second, RepairUtf8(part));
      components.push_back(it->second);
    }
    at = slash + 1;
  }
  // Always a build id entry (empty when unknown): every mapping then resolves in any reader.
  InternedString(f::kBuildIds, iid,
                 module != nullptr && module->build_id != kNoString
                     ? RawBuildId(p_.strings.Get(module->build_id))
                     : std::string());
  const size_t m = enc_.BeginNested(f::kMappings);
  enc_.AddVarint(f::kIid, iid);
  enc_.AddVarint(f::kMappingBuildId, iid);
  enc_.AddVarint(f::kMappingStart, module != nullptr ? module->start : 0);
  enc_.AddVarint(f::kMappingEnd, module != nullptr ? module->end : 0);
  for (uint64_t c : components) enc_.AddVarint(f::kMappingPathIds, c);
  enc_.EndNested(m);
  return iid;
}

void PerfettoWriter::InternCallstack(uint32_t stack) {
  callstack_interned_[stack] = true;
  const NativeStack& st = p_.stacks[stack];
  const std::vector<std::string>& names = cpu_->frames_outermost_first[stack];
  std::vector<uint64_t> frames;  // innermost first, as the PCs
  const size_t interned = enc_.BeginNested(f::kInternedData);
  for (uint32_t d = 0; d < st.depth && st.first_pc + d < p_.stack_pcs.size(); ++d) {
    const uint64_t pc = p_.stack_pcs[st.first_pc + d];
    auto [it, added] = frame_iids_.try_emplace(pc, frame_iids_.size() + 1);
    if (added) {
      // The symbolizer names a PC the same in every stack: its name here is the frame's.
      const uint64_t function =
          FunctionIid(d < names.size() ? names[names.size() - 1 - d] : std::string("?"));
      uint64_t rel_pc = 0;
      const uint64_t mapping = MappingIid(pc, &rel_pc);
      const size_t fr = enc_.BeginNested(f::kFrames);
      enc_.AddVarint(f::kIid, it->second);
      enc_.AddVarint(f::kFrameFunctionName, function);
      enc_.AddVarint(f::kFrameMapping, mapping);
      enc_.AddVarint(f::kFrameRelPc, rel_pc);
      enc_.EndNested(fr);
    }
    frames.push_back(it->second);
  }
  const size_t cs = enc_.BeginNested(f::kCallstacks);
  enc_.AddVarint(f::kIid, uint64_t{stack} + 1);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {  // outermost first
    enc_.AddVarint(f::kCallstackFrames, *it);
  }
  enc_.EndNested(cs);
  enc_.EndNested(interned);
}

}  // namespace gprof::perfetto
