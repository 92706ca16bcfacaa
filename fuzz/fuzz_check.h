// Shared by the fuzz targets that check invariants (not only "no crash"): a broken invariant
// prints where and what, then aborts, so libFuzzer reports it as a crash and keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define GPROF_FUZZ_CHECK(condition)                                                        \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
