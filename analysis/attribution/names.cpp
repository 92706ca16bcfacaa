// Display names (see names.h).
#include "analysis/attribution/names.h"

#include <cxxabi.h>

#include <cstdlib>

namespace gprof {

std::string DemangleKernelName(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  const std::string z(mangled);
  int status = 0;
  char* d = abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) {
    std::free(d);
    return z;
  }
  std::string out(d);
  std::free(d);
  return out;
}

namespace {

std::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kHtoA: return "HtoA";
    case CopyKind::kAtoH: return "AtoH";
    case CopyKind::kAtoA: return "AtoA";
    case CopyKind::kAtoD: return "AtoD";
    case CopyKind::kDtoA: return "DtoA";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    default: return "Unknown";
  }
}

std::string_view MemKindName(MemKind k) {
  switch (k) {
    case MemKind::kPageable: return "Pageable";
    case MemKind::kPinned: return "Pinned";
    case MemKind::kDevice: return "Device";
    case MemKind::kArray: return "Array";
    case MemKind::kManaged: return "Managed";
    case MemKind::kDeviceStatic: return "Device Static";
    case MemKind::kManagedStatic: return "Managed Static";
    default: return "Unknown";
  }
}

}  // namespace

std::string MemcpyName(const Memcpy& m) {
  std::string s = "Memcpy ";
  s += CopyKindName(m.kind);
  s += " (";
  s += MemKindName(m.src_kind);
  s += " -> ";
  s += MemKindName(m.dst_kind);
  s += ")";
  return s;
}

std::string MemsetName(const Memset& m) {
  return "Memset (" + std::string(MemKindName(m.mem_kind)) + ")";
}

std::string_view SyncName(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize: return "Event Sync";
    case SyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case SyncKind::kStreamSynchronize: return "Stream Sync";
    case SyncKind::kContextSynchronize: return "Context Sync";
    default: return "Unknown Sync";
  }
}

std::string_view OverheadName(OverheadKind kind) {
  switch (kind) {
    case OverheadKind::kDriverCompiler: return "CUPTI overhead: driver compiler";
    case OverheadKind::kActivityBuffer: return "CUPTI overhead: activity buffer flush";
    case OverheadKind::kInstrumentation: return "CUPTI overhead: instrumentation";
    case OverheadKind::kResource: return "CUPTI overhead: resource";
    case OverheadKind::kRuntimeTrigger: return "CUPTI overhead: runtime triggered module loading";
    case OverheadKind::kLazyFunctionLoad: return "CUPTI overhead: lazy function loading";
    case OverheadKind::kCommandBuffer: return "CUPTI overhead: command buffer full";
    case OverheadKind::kActivityBufferRequest: return "CUPTI overhead: activity buffer request";
    default: return "CUPTI overhead";
  }
}

NameCache::NameCache(const Profile& profile) : profile_(profile) {
  for (const ApiName& n : profile.api_names) {
    apis_[static_cast<uint32_t>(n.domain) << 16 | n.cbid] = std::string(profile.strings.Get(n.name));
  }
  kernels_.resize(profile.strings.size());
  kernel_done_.resize(profile.strings.size());
}

const std::string& NameCache::ApiCallName(const ApiCall& call) {
  const bool driver = call.domain == ApiDomain::kDriver;
  std::string& s = apis_[static_cast<uint32_t>(call.domain) << 16 | call.cbid];
  if (s.empty()) {
    s = std::string(driver ? "cuda_driver" : "cuda_runtime") + " cbid " + std::to_string(call.cbid);
  }
  return s;
}

const std::string& NameCache::KernelName(StringId mangled) {
  if (mangled >= kernels_.size()) {
    kernels_.resize(mangled + 1u);
    kernel_done_.resize(mangled + 1u);
  }
  if (!kernel_done_[mangled]) {
    kernels_[mangled] = DemangleKernelName(profile_.strings.Get(mangled));
    kernel_done_[mangled] = true;
  }
  return kernels_[mangled];
}

}  // namespace gprof
