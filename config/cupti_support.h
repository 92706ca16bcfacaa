// The CUPTI versions this build decodes and the order in which a libcupti is looked for: one
// table, read by the collector where it accepts or refuses a libcupti (collector/cupti/
// record_structs.h) and printed by `gprof-run --version`. CUDA-free and header-only, so the
// launcher can include it.
#pragma once

#include <cstdint>

namespace gprof {

// One CUPTI major this build decodes. Versions are cuptiGetVersion's numbers (CUPTI_API_VERSION):
// CUDA 13 numbers them xxyyzz (cupti_version.h: "xx major version of the CUDA Toolkit, yy minor
// version, zz CUPTI-specific update or patch version"); CUDA 12 and older use small integers
// (cupti_version.h of 12.8: "v19 : CUDA Toolkit 12.0" ... "v26 : CUDA Toolkit 12.8").
struct CuptiSupport {
  int major;                   // CUDA major: libcupti.so.<major>
  int min_api_version;         // the oldest version whose records this build decodes
  int max_tested_api_version;  // the newest version whose headers the layout checks ran against
  const char* layouts;         // the record structs decoded (each read as its known prefix)
};

// Within a CUDA major a record only grows at its end (13.1/13.2's Kernel11 is Kernel10 plus
// `priority`; 13.5's Kernel13 adds `executionModel` and `sourceGraphId/NodeId` after it; Memcpy7
// is Memcpy6 plus `sourceGraphId/NodeId`; Device6 is Device5 plus `numTpcs`), and
// cuptiActivityGetNextRecord steps by the library's own record size: so any version of a listed
// major at or above min_api_version is decoded, reading the 13.0 prefix of each record. A version
// above max_tested_api_version is accepted with a note that it is untested.
// CUDA 12 writes shorter records: a 208-byte Kernel9 (12.4 on), and before 12.8 an 88-byte
// Memcpy5, a 40-byte Synchronization and (12.4, 12.5) a 120-byte Memory3. Each is its CUDA 13.0
// successor cut short, with every field the decoder reads at the same offset and inside the
// shorter record (collector/cupti/record_layout_check.cpp, compiled against the 12.4, 12.6, 12.8
// and 12.9 headers). 12.3 and older (API version 21 and below) are not decoded: their headers were
// never checked.
inline constexpr CuptiSupport kCuptiSupported[] = {
    {13, 130000, 130500,
     "Kernel10 Memcpy6 MemcpyPtoP4 Memset4 Memory4 Synchronization2 Overhead3 Device5 (the 13.0 "
     "prefix of 13.1-13.5's larger Kernel11/13, Memcpy7, Memset5, Device6)"},
    {12, 22, 28,
     "Kernel9 Memcpy6 MemcpyPtoP4 Memset4 Memory4 Synchronization2 Overhead3 Device5 (12.8, 12.9); "
     "Memcpy5, Synchronization and Memory3 (12.4, 12.5) or Memory4 (12.6) before 12.8 (each read "
     "as the 13.0 struct's prefix)"},
};

inline constexpr const char* kCuptiSearchOrder[] = {
    "the libcupti already loaded in the process (any libcupti.so.*; a second one is never loaded)",
    "GPROF_CUPTI_LIB (only when no libcupti is loaded yet)",
    "pip-installed CUDA wheels beside a loaded library (torch/lib, nvidia/cu13/lib)",
    "pip-installed CUDA wheels in $VIRTUAL_ENV",
    "pip-installed CUDA wheels in $CONDA_PREFIX",
    "pip-installed CUDA wheels in the prefix of the python that was run (argv[0])",
    "pip-installed CUDA wheels in the prefix of the loaded libpython",
    "pip-installed CUDA wheels in the prefix of the interpreter (/proc/self/exe)",
    "pip-installed CUDA wheels in ~/.local",
    "$CUDA_HOME, then $CUDA_PATH",
    "the CUDA toolkit gprof-run was built with",
    "the dynamic linker's search path (libcupti.so.13; libcupti.so.12 everywhere above when the "
    "program loaded a CUDA 12 libcudart.so.12)",
};

// The CUDA major a cuptiGetVersion number belongs to: xxyyzz (13.0 on) -> xx; the small integers
// 19 and up are CUDA 12 (v19 is 12.0, v26 12.8, v27 12.9, v28 12.9 Update 1); anything else
// (CUDA 11 and before, or a number no CUPTI reports) -> 0.
inline constexpr int CuptiMajorOf(uint32_t version) {
  if (version >= 130000) return static_cast<int>(version / 10000);
  return version >= 19 && version < 100 ? 12 : 0;
}

// The table row that decodes `version`, or nullptr.
inline constexpr const CuptiSupport* FindCuptiSupport(uint32_t version) {
  for (const CuptiSupport& s : kCuptiSupported) {
    if (s.major == CuptiMajorOf(version) && version >= static_cast<uint32_t>(s.min_api_version)) {
      return &s;
    }
  }
  return nullptr;
}

}  // namespace gprof
