// Finding and loading libcupti at run time (dlopen, never linked: a missing libcupti must be a
// message, not a load failure of the injection library), and the table of CUPTI entry points the
// rest of the collector calls through.
//
// Threads: LoadCupti runs once, on the thread that calls StartGpuCollection (cold). The loaded
// table is then read-only and may be used from any thread, including CUPTI callbacks.
#pragma once

#include <cupti.h>

#include <map>
#include <string>
#include <vector>

namespace gprof::collector {

// Every CUPTI function the collector uses. All are resolved at load; one missing symbol makes the
// whole load fail (a libcupti too old or too new to trust). Subscribe is cuptiSubscribe_v2 (CUDA
// 13.0+), or, in a libcupti without it (CUDA 12), an adapter that calls cuptiSubscribe and leaves
// the params' oldSubscriberName empty.
//
// Nothing here is called by the loader: finding and loading a libcupti is dlopen and dlsym only.
// The first call into it (cuptiGetVersion, in StartGpuCollection) comes after the driver has
// called InitializeInjection: torch 2.15's libcupti 13.2, called in a process with no driver,
// recurses in cuptiGetVersion until the stack overflows.
struct CuptiApi {
  decltype(&cuptiGetVersion) GetVersion = nullptr;
  decltype(&cuptiGetResultString) GetResultString = nullptr;
  decltype(&cuptiSubscribe_v2) Subscribe = nullptr;
  decltype(&cuptiUnsubscribe) Unsubscribe = nullptr;
  decltype(&cuptiEnableDomain) EnableDomain = nullptr;
  decltype(&cuptiEnableCallback) EnableCallback = nullptr;  // optional: else EnableDomain
  decltype(&cuptiGetCallbackName) GetCallbackName = nullptr;
  decltype(&cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&cuptiActivityEnableAndDump) ActivityEnableAndDump = nullptr;  // late attach
  decltype(&cuptiActivityDisable) ActivityDisable = nullptr;
  decltype(&cuptiActivitySetAttribute) ActivitySetAttribute = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
  decltype(&cuptiGetTimestamp) GetTimestamp = nullptr;
};

// Where a candidate path came from, for the message that says which libcupti was used. The search
// order is config/cupti_support.h's kCuptiSearchOrder (the wheels before the toolkits).
enum class CuptiSource {
  kExplicit,          // GPROF_CUPTI_LIB
  kAlreadyLoaded,     // a libcupti.so.* some other component already loaded (torch does)
  kBuildToolkit,      // the toolkit gprof-run was built with
  kCudaHome,          // $CUDA_HOME / $CUDA_PATH
  kLoadedPackage,     // site-packages holding a library already loaded (torch/lib, an nvidia wheel)
  kVirtualEnv,        // $VIRTUAL_ENV
  kCondaPrefix,       // $CONDA_PREFIX
  kInterpreterArgv0,  // the interpreter as invoked (argv[0], symlinks kept): sys.prefix in a venv
  kLoadedLibpython,   // prefix of a loaded libpython3.*.so: the base install, not the venv
  kInterpreterExe,    // /proc/self/exe, symlinks resolved: a venv's python names the base install
  kUserSite,          // ~/.local (pip install --user)
  kLinkerPath,        // the dynamic linker's own search for libcupti.so.13
};
const char* CuptiSourceName(CuptiSource source);

struct CuptiCandidate {
  std::string path;
  CuptiSource source;
};

// Inputs of the search, gathered from the process (CollectSearchInputs) or given by tests.
struct CuptiSearchInputs {
  std::string explicit_path;       // GPROF_CUPTI_LIB ("" = search)
  std::string build_toolkit_root;  // GPROF_CUDA_TOOLKIT_ROOT at build time
  std::string build_library_dir;   // GPROF_CUDA_LIBRARY_DIR at build time
  std::string cuda_home;           // $CUDA_HOME (or $CUDA_PATH)
  // Paths of the shared objects loaded in the process, in load order (dl_iterate_phdr).
  std::vector<std::string> loaded_libraries;
  std::string virtual_env;        // $VIRTUAL_ENV
  std::string conda_prefix;       // $CONDA_PREFIX
  std::string interpreter_argv0;  // argv[0] as a path (PATH-searched if it had no '/'), unresolved
  std::string interpreter_exe;    // /proc/self/exe (symlinks resolved)
  std::string home;               // $HOME
  // The file name looked for: libcupti.so.12 when the program loaded a CUDA 12 libcudart.so.12
  // (CUDA 12 programs need CUDA 12's CUPTI), else libcupti.so.13.
  std::string soname = "libcupti.so.13";
};
// "libcupti.so.12" when `loaded_libraries` holds a libcudart.so.12, else "libcupti.so.13". Pure.
std::string CuptiSonameFor(const std::vector<std::string>& loaded_libraries);

// Pure: the ordered list of files to try (the already-loaded libcupti is checked before these, the
// linker's own search after them). An explicit path is authoritative: when set, it is the only
// candidate. Each path appears once, under the first source that produced it.
// Prefixes expand through `list_site_packages` (prefix -> site-packages dirs) so tests can run
// without a file system walk; site-packages dirs read off loaded libraries need no expansion.
std::vector<CuptiCandidate> CuptiCandidates(
    const CuptiSearchInputs& inputs,
    std::vector<std::string> (*list_site_packages)(const std::string& prefix));

// Real site-packages lister: <prefix>/lib/python3*/site-packages, .../dist-packages and
// <prefix>/lib64/python3*/site-packages, each directory once (a venv's lib64 is a link to lib).
std::vector<std::string> ListSitePackages(const std::string& prefix);

// Reads the process: config path, build-time paths, CUDA_HOME, the loaded libraries, VIRTUAL_ENV,
// CONDA_PREFIX, argv[0], /proc/self/exe and HOME.
CuptiSearchInputs CollectSearchInputs(const std::string& explicit_path);

struct CuptiLoadResult {
  bool ok = false;
  CuptiApi api;
  std::string path;            // the file that was loaded
  CuptiSource source = CuptiSource::kExplicit;
  int soname_major = 0;        // N of libcupti.so.N in `path` (0: not in the name)
  bool has_subscribe_v2 = false;
  // Set when a libcupti was already loaded and GPROF_CUPTI_LIB named another file: that file is
  // not loaded (two CUPTIs in one process hook one driver twice).
  std::string explicit_not_loaded;
  // When !ok: one line, what was tried and why it failed. `already_loaded` says the failing
  // library is one the process had loaded itself: then no other can be tried in this process.
  std::string error;
  bool already_loaded = false;
};

// The libcupti.so.* among `loaded_libraries` (dl_iterate_phdr paths, load order). Pure.
std::vector<std::string> LoadedCuptiLibraries(const std::vector<std::string>& loaded_libraries);
// N of ".../libcupti.so.N[.x.y]", or 0. Pure.
int CuptiSonameMajor(const std::string& path);

// Resolves every entry point of `handle` with dlsym (no call into the library); returns the first
// missing symbol's name, or "". *has_v2 says whether cuptiSubscribe_v2 was found.
std::string ResolveCuptiApi(void* handle, CuptiApi* api, bool* has_v2);

// When the process already has a libcupti (inputs.loaded_libraries), uses that one and loads no
// other, whatever GPROF_CUPTI_LIB says. Else loads the first loadable candidate (when none loads
// and no explicit path was given, last the dynamic linker's own search for libcupti.so.13:
// LD_LIBRARY_PATH, ld.so.cache). Resolves every symbol. dlopen and dlsym only: never calls into
// the library. Never throws; never dlcloses a library CUPTI may have hooked into.
CuptiLoadResult LoadCupti(const CuptiSearchInputs& inputs);

}  // namespace gprof::collector
