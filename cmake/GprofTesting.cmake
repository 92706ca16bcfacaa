# gprof_add_test(NAME SOURCES a.cpp ... LIBS lib ... LABELS unit|process|standin|gpu ...)
# Builds one GoogleTest binary and registers its tests with ctest. Labels:
#   unit     pure, in-process (model, config, analysis, outputs, decoders)
#   process  runs gprof-run / the injection library as real processes
#   standin  needs the CUDA/CUPTI stand-in (tests/cudasim)
#   gpu      needs a real GPU; skips cleanly elsewhere
#   wheel    builds the wheel and tests the installed one (tests/wheel)
# Labels given outside this function: torch (PyPI torch, tests/torch and python/), browser
# (chromium, tests/report), consumers (HTA and TensorBoard's profiler plugin reading our traces,
# tests/consumers), fuzz (fuzz/: each fuzz target's seed corpus replayed through its
# invariants). A test that skips reports Skipped, never Passed: gtest's GTEST_SKIP through
# gtest_discover_tests' skip pattern, Python through exit status 77 (SKIP_RETURN_CODE 77;
# tests/support/run_unittest.py). scripts/test counts each label's tests that ran and passed
# (scripts/test_suites.py) and, under CI=true, fails when one of them is empty.
include(GoogleTest)
function(gprof_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    GPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}" GPROF_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
