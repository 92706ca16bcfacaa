# cupti_library_test (unit): the real libcupti libraries, dlopen and dlsym only (see the test's
# file comment). The toolkit's libcupti sits in lib64 or, in some installs, extras/CUPTI/lib64.
set(GPROF_TOOLKIT_CUPTI ${CUDAToolkit_LIBRARY_DIR}/libcupti.so.13)
if(NOT EXISTS ${GPROF_TOOLKIT_CUPTI} AND EXISTS ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/lib64/libcupti.so.13)
  set(GPROF_TOOLKIT_CUPTI ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/lib64/libcupti.so.13)
endif()
gprof_add_test(cupti_library_test
  SOURCES cupti/cupti_library_test.cpp
  LIBS gprof_collector_cupti gprof_collector_host gprof_support ${CMAKE_DL_LIBS})
target_include_directories(cupti_library_test PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(cupti_library_test PRIVATE
  GPROF_TOOLKIT_CUPTI="${GPROF_TOOLKIT_CUPTI}" GPROF_CUPTI_HEADER_SETS="${GPROF_CUPTI_HEADER_SETS}"
  GPROF_TORCH_PYTHON="${GPROF_TORCH_PYTHON}")
