# The CUPTI-facing sources compiled once more against each CUDA 13 CUPTI header set that
# scripts/fetch-cupti-headers fetched (13.2 and 13.5 from PyPI): proof that gprof-run builds
# against them and that record_layout_check.cpp's offsets hold there. The CUDA 12 sets (12.4,
# 12.6, 12.8, 12.9) get the layout check alone: gprof-run is built with CUDA 13 headers and decodes CUDA 12's
# records by the same 13.0 prefix, which the check proves they have. Object libraries in ALL, so
# a header set that breaks the build or moves a decoded field fails the normal build. A set that
# is missing is a failing ctest (cupti_header_set_<version>), never a silently shorter check.
set(GPROF_CUPTI_HEADER_SETS "$ENV{HOME}/.cache/gprof-run/cupti-headers" CACHE PATH
    "Folder of CUPTI header sets (<version>/include), filled by scripts/fetch-cupti-headers")
set(GPROF_CUPTI_HEADER_VERSIONS 13.2 13.5 12.4 12.6 12.8 12.9 CACHE INTERNAL "CUPTI header sets the layout checks need")
foreach(version ${GPROF_CUPTI_HEADER_VERSIONS})
  string(REPLACE "." "_" tag ${version})
  set(dir ${GPROF_CUPTI_HEADER_SETS}/${version}/include)
  if(EXISTS ${dir}/cupti_version.h AND version VERSION_LESS 13)
    add_library(cupti_layouts_${tag} OBJECT cupti/record_layout_check.cpp)
    target_include_directories(cupti_layouts_${tag} BEFORE PRIVATE ${dir})
    target_include_directories(cupti_layouts_${tag} PRIVATE ${PROJECT_SOURCE_DIR})
  elseif(EXISTS ${dir}/cupti_version.h AND EXISTS ${dir}/cuda.h)
    add_library(cupti_headers_${tag} OBJECT
      cupti/record_layout_check.cpp cupti/activity_decoder.cpp cupti/activity_buffers.cpp
      cupti/activity_pool.cpp cupti/api_callback.cpp cupti/api_filter.cpp cupti/call_params.cpp cupti/gpu_drain.cpp
      cupti/loader.cpp cupti/session.cpp cupti/session_drain.cpp cupti/start_messages.cpp)
    target_include_directories(cupti_headers_${tag} BEFORE PRIVATE ${dir})
    gprof_module_include_root(cupti_headers_${tag} collector)
    target_include_directories(cupti_headers_${tag} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(cupti_headers_${tag} PRIVATE gprof_config gprof_model gprof_support
                          gprof_collector_host)
  else()
    message(WARNING "CUPTI ${version} headers not found in ${GPROF_CUPTI_HEADER_SETS}: run "
                    "scripts/fetch-cupti-headers (the cupti_header_set_${version} test fails)")
    if(GPROF_BUILD_TESTS)
      add_test(NAME cupti_header_set_${version}
               COMMAND sh -c "echo 'CUPTI ${version} headers missing in ${GPROF_CUPTI_HEADER_SETS}: run scripts/fetch-cupti-headers'; exit 1")
      set_tests_properties(cupti_header_set_${version} PROPERTIES LABELS unit)
    endif()
  endif()
endforeach()
