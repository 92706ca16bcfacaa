// Finding and loading libcupti (see loader.h). Cold code: runs once inside
// StartGpuCollection on the injection thread; allocation and logging are fine here.
#include "collector/cupti/loader.h"

#include <dlfcn.h>
#include <link.h>
#include <glob.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "support/proc_self.h"
#include "support/search_path.h"

namespace gprof::collector {
namespace {

constexpr const char* kCuptiSoname = "libcupti.so.13";

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "/venv/" and "/venv" must yield the same candidates, or the dedup below misses them.
std::string StripTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

void AddIfSet(std::vector<CuptiCandidate>* out, const std::string& dir, CuptiSource source) {
  if (dir.empty()) return;
  std::string path = StripTrailingSlashes(dir) + "/" + kCuptiSoname;
  for (const CuptiCandidate& c : *out) {
    if (c.path == path) return;
  }
  out->push_back({path, source});
}

// The wheel layouts under one site-packages dir. CUDA 13 wheels group every library in
// nvidia/cu13/lib; the CUDA 12 layout (one folder per component) is kept because some 13.x cupti
// wheels still used it.
void AddWheelDirs(std::vector<CuptiCandidate>* out, const std::string& site, CuptiSource source) {
  if (site.empty()) return;
  const std::string s = StripTrailingSlashes(site);
  AddIfSet(out, s + "/nvidia/cu13/lib", source);
  AddIfSet(out, s + "/nvidia/cuda_cupti/lib", source);
}

void AddPrefix(std::vector<CuptiCandidate>* out, const std::string& prefix, CuptiSource source,
               std::vector<std::string> (*list_site_packages)(const std::string&)) {
  if (prefix.empty()) return;
  const std::string p = StripTrailingSlashes(prefix);
  for (const std::string& site : list_site_packages(p)) AddWheelDirs(out, site, source);
  // Debian's /usr Python also searches /usr/local/lib/python3.X/dist-packages, where a root
  // `pip install` puts the wheels.
  if (p == "/usr") {
    for (const std::string& site : list_site_packages("/usr/local")) {
      AddWheelDirs(out, site, source);
    }
  }
}

// <prefix>/bin/python3.X -> <prefix>; "" when the file is not a Python interpreter.
std::string InterpreterPrefix(const std::string& exe) {
  if (exe.empty() || exe[0] != '/' || !StartsWith(PathBasename(exe), "python")) return "";
  return PathDirname(PathDirname(exe));
}

// The site-packages dir a loaded library sits in: <site>/torch/lib/libtorch_cuda.so or
// <site>/nvidia/cu13/lib/libcudart.so.13 -> <site>. A libtorch also counts outside a dir named
// site-packages (a --target or PYTHONPATH dir): torch/lib's grandparent holds the nvidia wheels.
std::vector<std::string> SitesOfLoadedLibrary(const std::string& lib) {
  std::vector<std::string> sites;
  for (std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    size_t at = lib.rfind(marker);
    if (at != std::string::npos) sites.push_back(lib.substr(0, at + marker.size() - 1));
  }
  const std::string dir = PathDirname(lib);
  if (StartsWith(PathBasename(lib), "libtorch") && EndsWith(dir, "/torch/lib")) {
    sites.push_back(PathDirname(PathDirname(dir)));
  }
  return sites;
}

// <prefix>/lib/libpython3.X.so.1.0 (conda, pyenv, --enable-shared builds) or the multiarch
// <prefix>/lib/x86_64-linux-gnu/libpython3.X.so.1.0 (Debian) -> <prefix>; "" otherwise.
std::string LibpythonPrefix(const std::string& lib) {
  const std::string base = PathBasename(lib);
  if (!StartsWith(base, "libpython3") || base.find(".so") == std::string::npos) return "";
  std::string dir = PathDirname(lib);
  for (int up = 0; up < 2; ++up) {
    const std::string name = PathBasename(dir);
    if (name == "lib" || name == "lib64") return PathDirname(dir);
    dir = PathDirname(dir);
  }
  return "";
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot, std::string* missing) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*slot == nullptr && missing->empty()) *missing = name;
  return *slot != nullptr;
}

// CUDA 12's cuptiSubscribe behind cuptiSubscribe_v2's signature (one libcupti per process, so one
// slot). The params' oldSubscriberName stays empty: CUDA 12 does not name the holder.
decltype(&cuptiSubscribe) g_subscribe_v1 = nullptr;
CUptiResult CUPTIAPI SubscribeV1(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                 void* userdata, CUpti_SubscriberParams* /*params*/) {
  return g_subscribe_v1 != nullptr ? g_subscribe_v1(subscriber, callback, userdata)
                                   : CUPTI_ERROR_NOT_INITIALIZED;
}

}  // namespace

std::string ResolveCuptiApi(void* h, CuptiApi* api, bool* has_v2) {
  std::string missing;
  Resolve(h, "cuptiGetVersion", &api->GetVersion, &missing);
  Resolve(h, "cuptiGetResultString", &api->GetResultString, &missing);
  api->Subscribe = reinterpret_cast<decltype(api->Subscribe)>(dlsym(h, "cuptiSubscribe_v2"));
  *has_v2 = api->Subscribe != nullptr;
  if (api->Subscribe == nullptr) {
    decltype(&cuptiSubscribe) v1 = nullptr;
    if (Resolve(h, "cuptiSubscribe", &v1, &missing)) {
      g_subscribe_v1 = v1;
      api->Subscribe = &SubscribeV1;
    }
  }
  Resolve(h, "cuptiUnsubscribe", &api->Unsubscribe, &missing);
  Resolve(h, "cuptiEnableDomain", &api->EnableDomain, &missing);
  api->EnableCallback =
      reinterpret_cast<decltype(api->EnableCallback)>(dlsym(h, "cuptiEnableCallback"));
  Resolve(h, "cuptiGetCallbackName", &api->GetCallbackName, &missing);
  Resolve(h, "cuptiActivityEnable", &api->ActivityEnable, &missing);
  Resolve(h, "cuptiActivityEnableAndDump", &api->ActivityEnableAndDump, &missing);
  Resolve(h, "cuptiActivityDisable", &api->ActivityDisable, &missing);
  Resolve(h, "cuptiActivitySetAttribute", &api->ActivitySetAttribute, &missing);
  Resolve(h, "cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks, &missing);
  Resolve(h, "cuptiActivityFlushAll", &api->ActivityFlushAll, &missing);
  Resolve(h, "cuptiActivityGetNextRecord", &api->ActivityGetNextRecord, &missing);
  Resolve(h, "cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords, &missing);
  Resolve(h, "cuptiGetTimestamp", &api->GetTimestamp, &missing);
  return missing;
}

namespace {

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

int CollectLoadedLibrary(dl_phdr_info* info, size_t, void* data) {
  // Runs under the dynamic linker's lock: no dlopen here, and nothing may throw through it.
  try {
    if (info->dlpi_name != nullptr && info->dlpi_name[0] == '/') {
      static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
    }
  } catch (...) {
  }
  return 0;
}

std::string CurrentDir() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string();
}

// argv[0] as the path the program was started from, without resolving symlinks: a relative
// path is joined to the current directory, a bare name is looked up in PATH as execvp does.
std::string Argv0Path() {
  const std::vector<std::string> args = ReadSelfCmdline();
  const std::string argv0 = args.empty() ? std::string() : args[0];
  if (argv0.empty()) return "";
  if (argv0.find('/') != std::string::npos) {
    if (argv0[0] == '/') return argv0;
    std::string cwd = CurrentDir();
    return cwd.empty() ? "" : cwd + "/" + argv0;
  }
  std::string found;
  ForEachSearchDir(Getenv("PATH"), [&](std::string dir) {
    if (dir.empty() || dir[0] != '/') {
      const std::string cwd = CurrentDir();
      if (cwd.empty()) return false;
      dir = dir.empty() ? cwd : cwd + "/" + dir;
    }
    std::string candidate = dir + "/" + argv0;
    if (access(candidate.c_str(), X_OK) != 0) return false;
    found = std::move(candidate);
    return true;
  });
  return found;
}

}  // namespace

const char* CuptiSourceName(CuptiSource source) {
  switch (source) {
    case CuptiSource::kExplicit: return "GPROF_CUPTI_LIB";
    case CuptiSource::kAlreadyLoaded: return "already loaded in the process";
    case CuptiSource::kBuildToolkit: return "the CUDA toolkit gprof-run was built with";
    case CuptiSource::kCudaHome: return "CUDA_HOME";
    case CuptiSource::kLoadedPackage:
      return "a pip-installed CUDA wheel beside a loaded library (e.g. torch)";
    case CuptiSource::kVirtualEnv: return "a pip-installed CUDA wheel in $VIRTUAL_ENV";
    case CuptiSource::kCondaPrefix: return "a pip-installed CUDA wheel in $CONDA_PREFIX";
    case CuptiSource::kInterpreterArgv0:
      return "a pip-installed CUDA wheel in the prefix of the python that was run (argv[0])";
    case CuptiSource::kLoadedLibpython:
      return "a pip-installed CUDA wheel in the prefix of the loaded libpython";
    case CuptiSource::kInterpreterExe:
      return "a pip-installed CUDA wheel in the prefix of the interpreter (/proc/self/exe)";
    case CuptiSource::kUserSite: return "a pip-installed CUDA wheel in ~/.local";
    case CuptiSource::kLinkerPath: return "the dynamic linker's search path";
  }
  return "?";
}

std::vector<std::string> ListSitePackages(const std::string& prefix) {
  std::vector<std::string> dirs;
  std::set<std::string> seen;  // real paths: a venv's lib64 is a symlink to lib
  for (const char* pattern : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages",
                              "/lib64/python3*/site-packages"}) {
    glob_t g{};
    std::string full = prefix + pattern;
    if (glob(full.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        char real[PATH_MAX];
        std::string key = realpath(g.gl_pathv[i], real) != nullptr ? real : g.gl_pathv[i];
        if (seen.insert(key).second) dirs.emplace_back(g.gl_pathv[i]);
      }
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
  // Python programs first: a CUDA wheel in the program's own environment is the CUDA its torch or
  // runtime wheels came with. Strongest evidence first: a library the process has loaded from a
  // site-packages dir proves that dir is the one it imports from; VIRTUAL_ENV and CONDA_PREFIX
  // say which environment was activated; argv[0] is what Python itself derives sys.prefix from.
  // libpython and /proc/self/exe only reach the base install (a venv links its python to the
  // system one and has no libpython of its own), so they come last.
  for (const std::string& lib : in.loaded_libraries) {
    for (const std::string& site : SitesOfLoadedLibrary(lib)) {
      AddWheelDirs(&out, site, CuptiSource::kLoadedPackage);
    }
  }
  AddPrefix(&out, in.virtual_env, CuptiSource::kVirtualEnv, list_site_packages);
  AddPrefix(&out, in.conda_prefix, CuptiSource::kCondaPrefix, list_site_packages);
  AddPrefix(&out, InterpreterPrefix(in.interpreter_argv0), CuptiSource::kInterpreterArgv0,
            list_site_packages);
  for (const std::string& lib : in.loaded_libraries) {
    AddPrefix(&out, LibpythonPrefix(lib), CuptiSource::kLoadedLibpython, list_site_packages);
  }
  AddPrefix(&out, InterpreterPrefix(in.interpreter_exe), CuptiSource::kInterpreterExe,
            list_site_packages);
  if (!in.home.empty()) {
    AddPrefix(&out, StripTrailingSlashes(in.home) + "/.local", CuptiSource::kUserSite,
              list_site_packages);
  }
  // Then the toolkits: $CUDA_HOME, which the user set, before the toolkit gprof-run was built
  // with, which on an installed wheel is the build machine's folder and may be another CUDA.
  if (!in.cuda_home.empty()) {
    const std::string home = StripTrailingSlashes(in.cuda_home);
    AddIfSet(&out, home + "/lib64", CuptiSource::kCudaHome);
    AddIfSet(&out, home + "/extras/CUPTI/lib64", CuptiSource::kCudaHome);
  }
  AddIfSet(&out, in.build_library_dir, CuptiSource::kBuildToolkit);
  if (!in.build_toolkit_root.empty()) {
    const std::string root = StripTrailingSlashes(in.build_toolkit_root);
    AddIfSet(&out, root + "/extras/CUPTI/lib64", CuptiSource::kBuildToolkit);
    AddIfSet(&out, root + "/lib64", CuptiSource::kBuildToolkit);
  }
  // The same places, for the CUDA 12 file name when that is the one looked for.
  if (in.soname != kCuptiSoname) {
    for (CuptiCandidate& c : out) c.path = PathDirname(c.path) + "/" + in.soname;
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
  dl_iterate_phdr(&CollectLoadedLibrary, &in.loaded_libraries);
  in.soname = CuptiSonameFor(in.loaded_libraries);
  in.virtual_env = Getenv("VIRTUAL_ENV");
  in.conda_prefix = Getenv("CONDA_PREFIX");
  in.interpreter_argv0 = Argv0Path();
  in.interpreter_exe = ReadSelfExe();
  in.home = Getenv("HOME");
  return in;
}

std::vector<std::string> LoadedCuptiLibraries(const std::vector<std::string>& loaded_libraries) {
  std::vector<std::string> found;
  for (const std::string& lib : loaded_libraries) {
    if (StartsWith(PathBasename(lib), "libcupti.so")) found.push_back(lib);
  }
  return found;
}

std::string CuptiSonameFor(const std::vector<std::string>& loaded_libraries) {
  for (const std::string& lib : loaded_libraries) {
    if (StartsWith(PathBasename(lib), "libcudart.so.12")) return "libcupti.so.12";
  }
  return kCuptiSoname;
}

int CuptiSonameMajor(const std::string& path) {
  const std::string base = PathBasename(path);
  if (!StartsWith(base, "libcupti.so.")) return 0;
  int major = 0;
  for (size_t i = sizeof("libcupti.so.") - 1; i < base.size() && base[i] != '.'; ++i) {
    if (base[i] < '0' || base[i] > '9' || major > 1000) return 0;
    major = major * 10 + (base[i] - '0');
  }
  return major;
}

namespace {

bool SameFile(const std::string& a, const std::string& b) {
  char ra[PATH_MAX];
  char rb[PATH_MAX];
  if (realpath(a.c_str(), ra) == nullptr || realpath(b.c_str(), rb) == nullptr) return a == b;
  return std::string_view(ra) == std::string_view(rb);
}

// The libcupti the process already has, reused (RTLD_NOLOAD: a handle to it, never a new load).
void* UseLoadedCupti(const CuptiSearchInputs& inputs, CuptiLoadResult* result) {
  const std::vector<std::string> loaded = LoadedCuptiLibraries(inputs.loaded_libraries);
  if (loaded.empty()) return nullptr;
  result->path = loaded.front();
  result->source = CuptiSource::kAlreadyLoaded;
  result->already_loaded = true;
  if (!inputs.explicit_path.empty() && !SameFile(inputs.explicit_path, loaded.front())) {
    result->explicit_not_loaded = inputs.explicit_path;
  }
  void* handle = dlopen(loaded.front().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    const char* why = dlerror();
    result->error = "the libcupti already loaded in the process, " + loaded.front() +
                    ", cannot be reached (" + (why ? why : "dlopen failed") + ")";
  }
  return handle;
}

}  // namespace

CuptiLoadResult LoadCupti(const CuptiSearchInputs& inputs) {
  CuptiLoadResult result;
  // A libcupti another component already loaded (torch's libtorch_cpu needs libcupti.so.13) is
  // the only one this process may use: a second copy would hook the same driver twice. An explicit
  // GPROF_CUPTI_LIB does not change that.
  void* handle = UseLoadedCupti(inputs, &result);
  if (result.already_loaded && handle == nullptr) return result;
  std::string tried;
  const std::vector<CuptiCandidate> candidates =
      handle != nullptr ? std::vector<CuptiCandidate>() : CuptiCandidates(inputs, &ListSitePackages);
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
    const char* soname = inputs.soname.c_str();
    handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      result.path = LoadedPath(handle, soname);
      result.source = CuptiSource::kLinkerPath;
    } else {
      tried += std::string(tried.empty() ? "" : ", ") + soname + " on the linker path";
    }
  }
  if (handle == nullptr) {
    result.error = "no libcupti was found or could be loaded (tried: " +
                   (tried.empty() ? std::string("nothing") : tried) + ")";
    return result;
  }
  result.soname_major = CuptiSonameMajor(result.path);
  std::string missing = ResolveCuptiApi(handle, &result.api, &result.has_subscribe_v2);
  if (!missing.empty()) {
    result.error = result.path + " lacks " + missing + ": it is not a libcupti gprof-run can use";
    result.api = CuptiApi{};
    return result;  // not dlclosed: harmless, and unloading CUPTI can crash 13.0
  }
  result.ok = true;
  return result;
}

}  // namespace gprof::collector
