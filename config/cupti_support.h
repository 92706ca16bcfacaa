// Which CUPTI versions this build's collector decodes, and where the injection library looks for
// libcupti: what `gprof-run --version` prints. CUDA-free (the launcher builds without the
// toolkit); collector/cupti/record_structs.h and collector/cupti/loader.cpp are the code these
// lines describe, and must change together with them.
#pragma once

namespace gprof {

struct CuptiSupport {
  int major;                   // CUDA major version of libcupti.so.<major>
  int min_api_version;         // lowest CUPTI_API_VERSION (xxyyzz) whose records are decoded
  int max_tested_api_version;  // highest one checked against its headers
  const char* layouts;         // the record layouts that family uses
};

// CUDA 13.0's layouts (record_structs.h): a libcupti of the 13.0 family (13.0 and its updates).
inline constexpr CuptiSupport kCuptiSupported[] = {
    {13, 130000, 130001,
     "CUDA 13.0: Kernel10, Memcpy6, MemcpyPtoP4, Memset4, Memory4, Synchronization2, Overhead3"},
};

// The injection library's search for libcupti.so.13, first match wins (collector/cupti/loader.cpp).
inline constexpr const char* kCuptiSearchOrder[] = {
    "$GPROF_CUPTI_LIB (only that file when set)",
    "a libcupti.so.13 the process has already loaded (torch's)",
    "the CUDA toolkit gprof-run was built with: its lib64 and extras/CUPTI/lib64",
    "$CUDA_HOME (or $CUDA_PATH): lib64 and extras/CUPTI/lib64",
    "nvidia/cu13/lib and nvidia/cuda_cupti/lib in the site-packages of a loaded library (torch)",
    "the same in $VIRTUAL_ENV, then $CONDA_PREFIX",
    "the same in the prefix of the python that was run (argv[0]), of a loaded libpython, of "
    "/proc/self/exe",
    "the same in ~/.local (pip install --user)",
    "libcupti.so.13 on the dynamic linker's search path (LD_LIBRARY_PATH, ld.so.cache)",
};

}  // namespace gprof
