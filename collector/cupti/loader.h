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
// whole load fail (a libcupti too old or too new to trust).
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

// Where a candidate path came from, for the message that says which libcupti was used. Listed in
// search order.
enum class CuptiSource {
  kExplicit,          // GPROF_CUPTI_LIB
  kAlreadyLoaded,     // a libcupti.so.13 some other component already loaded
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
};

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
  std::string error;           // when !ok: one line, what was tried and why it failed
};

// Loads the first loadable candidate (after a libcupti.so.13 already in the process; when no
// candidate loads and no explicit path was given, last the dynamic linker's own search for
// libcupti.so.13: LD_LIBRARY_PATH, ld.so.cache) and resolves every symbol. Never throws; never
// dlcloses a library CUPTI may have hooked into.
CuptiLoadResult LoadCupti(const CuptiSearchInputs& inputs);

}  // namespace gprof::collector
