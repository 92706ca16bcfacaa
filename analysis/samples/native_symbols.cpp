// Native stack symbolization (see native_symbols.h). Launcher process only.
#include "analysis/samples/native_symbols.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#ifdef GPROF_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

namespace gprof {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

[[maybe_unused]] std::string Demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string s(out);
  std::free(out);
  return s;
}

}  // namespace

#ifdef GPROF_HAVE_LIBDW

bool NativeSymbolsAvailable() { return true; }

struct NativeSymbolizer::Impl {
  Dwfl* dwfl = nullptr;
  std::unordered_map<const ModuleInfo*, bool> current;  // the file on disk is the one that ran
  Dwfl_Callbacks callbacks{};
  ~Impl() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

NativeSymbolizer::NativeSymbolizer(const Profile& p) : p_(p), impl_(std::make_unique<Impl>()) {
  impl_->callbacks.find_elf = dwfl_build_id_find_elf;
  impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  impl_->callbacks.section_address = dwfl_offline_section_address;
  impl_->dwfl = dwfl_begin(&impl_->callbacks);
  if (impl_->dwfl == nullptr) return;
  dwfl_report_begin(impl_->dwfl);
  for (const ModuleInfo& m : p.modules) {
    const std::string path(p.strings.Get(m.path));
    dwfl_report_elf(impl_->dwfl, Basename(path).c_str(), path.c_str(), -1, m.bias, false);
  }
  dwfl_report_end(impl_->dwfl, nullptr, nullptr);
}

std::pair<std::string, std::string> NativeSymbolizer::Describe(uint64_t pc) {
  const ModuleInfo* m = ModuleOf(pc);
  const std::string fallback =
      m == nullptr ? Hex(pc) : Basename(std::string(p_.strings.Get(m->path))) + "+" + Hex(pc - m->bias);
  if (impl_->dwfl == nullptr || m == nullptr) return {fallback, ""};
  const uint64_t at = pc - 1;  // the call instruction, not the one after it
  Dwfl_Module* mod = dwfl_addrmodule(impl_->dwfl, at);
  if (mod == nullptr) return {fallback, ""};
  auto known = impl_->current.find(m);
  if (known == impl_->current.end()) {
    // A file rebuilt since the run would name the wrong functions: keep module+offset for it.
    bool same = true;
    if (m->build_id != kNoString) {
      const unsigned char* bits = nullptr;
      GElf_Addr vaddr = 0;
      const int n = dwfl_module_build_id(mod, &bits, &vaddr);
      std::string hex;
      for (int i = 0; i < n; ++i) {
        char b[3];
        std::snprintf(b, sizeof b, "%02x", bits[i]);
        hex += b;
      }
      same = n <= 0 || hex == p_.strings.Get(m->build_id);
    }
    known = impl_->current.emplace(m, same).first;
  }
  if (!known->second) return {fallback, ""};
  const char* name = dwfl_module_addrname(mod, at);
  if (name == nullptr) return {fallback, ""};
  std::string where;
  if (Dwfl_Line* line = dwfl_module_getsrc(mod, at)) {
    int lineno = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file != nullptr && lineno > 0) where = Basename(file) + ":" + std::to_string(lineno);
  }
  return {Demangle(name), where};
}

#else  // !GPROF_HAVE_LIBDW

bool NativeSymbolsAvailable() { return false; }

struct NativeSymbolizer::Impl {};

NativeSymbolizer::NativeSymbolizer(const Profile& p) : p_(p), impl_(std::make_unique<Impl>()) {}

std::pair<std::string, std::string> NativeSymbolizer::Describe(uint64_t pc) {
  const ModuleInfo* m = ModuleOf(pc);
  if (m == nullptr) return {Hex(pc), ""};
  return {Basename(std::string(p_.strings.Get(m->path))) + "+" + Hex(pc - m->bias), ""};
}

#endif

NativeSymbolizer::~NativeSymbolizer() = default;

std::string NativeSymbolizer::Frame(uint64_t pc) {
  auto [function, where] = Describe(pc);
  return where.empty() ? function : function + " (" + where + ")";
}

std::string NativeSymbolizer::Function(uint64_t pc) { return Describe(pc).first; }

const ModuleInfo* NativeSymbolizer::ModuleOf(uint64_t pc) const {
  for (const ModuleInfo& m : p_.modules) {
    if (pc > m.start && pc <= m.end) return &m;  // a return address may sit at the very end
  }
  return nullptr;
}

bool NativeSymbolizer::InRuntimeModule(uint64_t pc) const {
  const ModuleInfo* m = ModuleOf(pc);
  if (m == nullptr) return false;
  const std::string base = Basename(std::string(p_.strings.Get(m->path)));
  for (const char* prefix : {"libcudart.", "libcuda.", "libcupti.", "libgprof_inject."}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

SymbolizedStacks SymbolizeStacks(const Profile& p) {
  SymbolizedStacks out;
  if (p.stacks.empty()) return out;
  NativeSymbolizer symbolizer(p);
  // A PC shared by many stacks is named once: (frame, function).
  std::unordered_map<uint64_t, std::pair<std::string, std::string>> names;
  out.frames.resize(p.stacks.size());
  out.top_user_frame.assign(p.stacks.size(), -1);
  out.top_user_function.assign(p.stacks.size(), "");
  for (size_t s = 0; s < p.stacks.size(); ++s) {
    const NativeStack& st = p.stacks[s];
    for (uint32_t i = 0; i < st.depth; ++i) {
      const uint64_t pc = p.stack_pcs[st.first_pc + i];
      auto it = names.find(pc);
      if (it == names.end()) {
        auto [function, where] = symbolizer.Describe(pc);
        std::string frame = where.empty() ? function : function + " (" + where + ")";
        it = names.emplace(pc, std::make_pair(std::move(frame), std::move(function))).first;
      }
      out.frames[s].push_back(it->second.first);
      if (out.top_user_frame[s] < 0 && !symbolizer.InRuntimeModule(pc)) {
        out.top_user_frame[s] = static_cast<int>(i);
        out.top_user_function[s] = it->second.second;
      }
    }
  }
  return out;
}

ApiStackIndex::ApiStackIndex(const Profile& p) : sorted_(p.api_stacks) {
  std::sort(sorted_.begin(), sorted_.end(), [](const ApiStackRef& a, const ApiStackRef& b) {
    return a.correlation_id < b.correlation_id;
  });
}

uint32_t ApiStackIndex::StackOf(uint32_t correlation_id) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), correlation_id,
                             [](const ApiStackRef& a, uint32_t c) { return a.correlation_id < c; });
  return it != sorted_.end() && it->correlation_id == correlation_id ? it->stack : kNoStack;
}

}  // namespace gprof
