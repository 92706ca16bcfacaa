// Finding and loading libcupti (see cupti_loader.h). Cold code: runs once inside
// StartGpuCollection on the injection thread; allocation and logging are fine here.
#include "collector/cupti/loader.h"

#include <dlfcn.h>
#include <link.h>
#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace gprof::collector {
namespace {

constexpr const char* kCuptiSoname = "libcupti.so.13";

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

void AddIfSet(std::vector<CuptiCandidate>* out, const std::string& dir, CuptiSource source) {
  if (dir.empty()) return;
  std::string path = dir + "/" + kCuptiSoname;
  for (const CuptiCandidate& c : *out) {
    if (c.path == path) return;
  }
  out->push_back({path, source});
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot, std::string* missing) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*slot == nullptr && missing->empty()) *missing = name;
  return *slot != nullptr;
}

// Resolves every entry point; returns the first missing symbol's name, or "".
std::string ResolveAll(void* h, CuptiApi* api) {
  std::string missing;
  Resolve(h, "cuptiGetVersion", &api->GetVersion, &missing);
  Resolve(h, "cuptiGetResultString", &api->GetResultString, &missing);
  Resolve(h, "cuptiSubscribe_v2", &api->Subscribe, &missing);
  Resolve(h, "cuptiUnsubscribe", &api->Unsubscribe, &missing);
  Resolve(h, "cuptiEnableDomain", &api->EnableDomain, &missing);
  Resolve(h, "cuptiGetCallbackName", &api->GetCallbackName, &missing);
  Resolve(h, "cuptiActivityEnable", &api->ActivityEnable, &missing);
  Resolve(h, "cuptiActivityDisable", &api->ActivityDisable, &missing);
  Resolve(h, "cuptiActivitySetAttribute", &api->ActivitySetAttribute, &missing);
  Resolve(h, "cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks, &missing);
  Resolve(h, "cuptiActivityFlushAll", &api->ActivityFlushAll, &missing);
  Resolve(h, "cuptiActivityGetNextRecord", &api->ActivityGetNextRecord, &missing);
  Resolve(h, "cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords, &missing);
  Resolve(h, "cuptiFinalize", &api->Finalize, &missing);
  return missing;
}

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

const char* CuptiSourceName(CuptiSource source) {
  switch (source) {
    case CuptiSource::kExplicit: return "GPROF_CUPTI_LIB";
    case CuptiSource::kAlreadyLoaded: return "already loaded in the process";
    case CuptiSource::kBuildToolkit: return "the CUDA toolkit gprof-run was built with";
    case CuptiSource::kCudaHome: return "CUDA_HOME";
    case CuptiSource::kPythonWheel: return "a pip-installed CUDA wheel";
    case CuptiSource::kLinkerPath: return "the dynamic linker's search path";
  }
  return "?";
}

std::vector<std::string> ListSitePackages(const std::string& prefix) {
  std::vector<std::string> dirs;
  for (const char* pattern : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages",
                              "/lib64/python3*/site-packages"}) {
    glob_t g{};
    std::string full = prefix + pattern;
    if (glob(full.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) dirs.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  return dirs;
}

std::vector<CuptiCandidate> CuptiCandidates(
    const CuptiSearchInputs& in,
    std::vector<std::string> (*list_site_packages)(const std::string& prefix)) {
  std::vector<CuptiCandidate> out;
  if (!in.explicit_path.empty()) {
    out.push_back({in.explicit_path, CuptiSource::kExplicit});
    return out;
  }
  AddIfSet(&out, in.build_library_dir, CuptiSource::kBuildToolkit);
  if (!in.build_toolkit_root.empty()) {
    AddIfSet(&out, in.build_toolkit_root + "/extras/CUPTI/lib64", CuptiSource::kBuildToolkit);
    AddIfSet(&out, in.build_toolkit_root + "/lib64", CuptiSource::kBuildToolkit);
  }
  if (!in.cuda_home.empty()) {
    AddIfSet(&out, in.cuda_home + "/lib64", CuptiSource::kCudaHome);
    AddIfSet(&out, in.cuda_home + "/extras/CUPTI/lib64", CuptiSource::kCudaHome);
  }
  for (const std::string& prefix : in.python_prefixes) {
    if (prefix.empty()) continue;
    for (const std::string& site : list_site_packages(prefix)) {
      // CUDA 13 wheels group every library in nvidia/cu13/lib; the CUDA 12 layout (one folder per
      // component) is kept because some 13.x cupti wheels still used it.
      AddIfSet(&out, site + "/nvidia/cu13/lib", CuptiSource::kPythonWheel);
      AddIfSet(&out, site + "/nvidia/cuda_cupti/lib", CuptiSource::kPythonWheel);
    }
  }
  return out;
}

CuptiSearchInputs CollectSearchInputs(const std::string& explicit_path) {
  CuptiSearchInputs in;
  in.explicit_path = explicit_path;
#ifdef GPROF_CUDA_TOOLKIT_ROOT
  in.build_toolkit_root = GPROF_CUDA_TOOLKIT_ROOT;
#endif
#ifdef GPROF_CUDA_LIBRARY_DIR
  in.build_library_dir = GPROF_CUDA_LIBRARY_DIR;
#endif
  in.cuda_home = Getenv("CUDA_HOME");
  if (in.cuda_home.empty()) in.cuda_home = Getenv("CUDA_PATH");
  // The running interpreter: /proc/self/exe = <prefix>/bin/python3.X for venvs, conda and system
  // Pythons alike.
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    std::string path(exe);
    std::string base = path.substr(path.rfind('/') + 1);
    if (base.rfind("python", 0) == 0) in.python_prefixes.push_back(DirName(DirName(path)));
  }
  in.python_prefixes.push_back(Getenv("VIRTUAL_ENV"));
  in.python_prefixes.push_back(Getenv("CONDA_PREFIX"));
  std::string home = Getenv("HOME");
  if (!home.empty()) in.python_prefixes.push_back(home + "/.local");
  return in;
}

CuptiLoadResult LoadCupti(const CuptiSearchInputs& inputs) {
  CuptiLoadResult result;
  std::vector<CuptiCandidate> candidates = CuptiCandidates(inputs, &ListSitePackages);

  void* handle = nullptr;
  // A libcupti another component already loaded (torch does) must be reused: two copies in one
  // process fight over the driver's callback slot. An explicit path still wins.
  if (inputs.explicit_path.empty()) {
    handle = dlopen(kCuptiSoname, RTLD_NOW | RTLD_NOLOAD);
    if (handle != nullptr) {
      result.path = LoadedPath(handle, kCuptiSoname);
      result.source = CuptiSource::kAlreadyLoaded;
    }
  }
  std::string tried;
  for (size_t i = 0; handle == nullptr && i < candidates.size(); ++i) {
    const CuptiCandidate& c = candidates[i];
    if (!tried.empty()) tried += ", ";
    tried += c.path;
    if (!FileExists(c.path)) {
      tried += " (not found)";
      continue;
    }
    handle = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += std::string(" (") + (why ? why : "dlopen failed") + ")";
      continue;
    }
    result.path = LoadedPath(handle, c.path);
    result.source = c.source;
  }
  if (handle == nullptr && inputs.explicit_path.empty()) {
    handle = dlopen(kCuptiSoname, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      result.path = LoadedPath(handle, kCuptiSoname);
      result.source = CuptiSource::kLinkerPath;
    } else {
      tried += std::string(tried.empty() ? "" : ", ") + kCuptiSoname + " on the linker path";
    }
  }
  if (handle == nullptr) {
    result.error = "libcupti.so.13 was not found or could not be loaded (tried: " +
                   (tried.empty() ? std::string("nothing") : tried) + ")";
    return result;
  }
  std::string missing = ResolveAll(handle, &result.api);
  if (!missing.empty()) {
    result.error = result.path + " lacks " + missing + ": it is not a CUDA 13 libcupti";
    result.api = CuptiApi{};
    return result;  // not dlclosed: harmless, and unloading CUPTI can crash 13.0
  }
  result.ok = true;
  return result;
}

}  // namespace gprof::collector
