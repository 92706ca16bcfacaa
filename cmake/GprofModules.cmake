# gprof_module_include_root(TARGET MODULE): makes MODULE's headers reachable as "MODULE/x.h" for
# TARGET and for every target that links TARGET, and for no other. The include path is a
# build-tree folder holding a single symlink, MODULE -> the module's source folder, so a module
# that does not link another cannot include its headers (the compiler says "No such file"), which
# is how the layering in docs/ARCHITECTURE.md is enforced at build time; tests/layering checks
# the finer rules (collector subfolders, CUDA headers) by reading the #include lines.
function(gprof_module_include_root target module)
  set(root ${PROJECT_BINARY_DIR}/include_roots/${module})
  if(NOT EXISTS ${root}/${module})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${module} ${root}/${module} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC ${root})
endfunction()
