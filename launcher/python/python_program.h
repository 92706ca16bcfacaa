// Is the command a Python program? Then gprof-run puts its Python start-up hook
// (python/gprof_run_hook/, found by FindPythonHookDir) first on PYTHONPATH. Launcher process only.
//
// IsPythonProgram is pure: the caller reads the program file's first bytes (ReadProgramHead), so
// the rules are unit-tested without files (launcher/python/python_program_test.cpp). The rules, in
// docs/LAUNCHER.md "Python programs":
//   - the program's basename is a Python interpreter: python, python3, python3.12, python3.13t
//     ("python", then digits and dots, then at most one ABI letter d, m, t or w); this covers
//     `python -m module` and `python script.py`;
//   - a launcher that runs Python: torchrun, deepspeed, accelerate-launch, `accelerate launch`;
//   - the program file starts with a shebang naming such an interpreter, directly
//     (#!/venv/bin/python3) or through env (#!/usr/bin/env python3, #!/usr/bin/env -S python3 -u);
//   - pip's launcher for long interpreter paths: "#!/bin/sh" then a line "'''exec' /path/python...".
// Anything else (a compiled program, a bash script, python3-config) is not Python.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gprof::launcher {

// Most bytes of the program file IsPythonProgram looks at.
inline constexpr size_t kProgramHeadBytes = 512;

// `basename` (no directory) names a Python interpreter: python[digits and dots][d|m|t|w].
bool IsPythonInterpreterName(std::string_view basename);

// `argv`: the command as given (argv[0] as typed, maybe with a directory). `head`: the first
// bytes of the file argv[0] resolved to ("" when unknown or unreadable).
bool IsPythonProgram(const std::vector<std::string>& argv, std::string_view head);

// Up to kProgramHeadBytes of `path`; "" when it cannot be read.
std::string ReadProgramHead(const std::string& path);

// The PYTHONPATH the program gets: `hook_dir` first, then `existing` unchanged ("" = unset or
// empty). When `existing` already starts with `hook_dir` (gprof-run under gprof-run) it is kept.
std::string PrependPythonPath(const std::string& hook_dir, const std::string& existing);

}  // namespace gprof::launcher
