// Unit tests for the "is this a Python program" rules and the PYTHONPATH the hook gets
// (python_program.h).
#include "launcher/python/python_program.h"

#include <gtest/gtest.h>

namespace gprof::launcher {
namespace {

TEST(PythonProgram, InterpreterNames) {
  for (const char* name : {"python", "python3", "python3.12", "python3.13t", "python3.7m",
                           "python3.12d", "pythonw", "python2.7"}) {
    EXPECT_TRUE(IsPythonInterpreterName(name)) << name;
  }
  for (const char* name : {"python3-config", "python3.12-config", "pythonista", "ipython",
                           "mypython", "py", "pypy3", "python3.12-dbg", "python3tt", ""}) {
    EXPECT_FALSE(IsPythonInterpreterName(name)) << name;
  }
}

TEST(PythonProgram, PythonExecutablesWithOrWithoutDirectory) {
  EXPECT_TRUE(IsPythonProgram({"python", "train.py"}, ""));
  EXPECT_TRUE(IsPythonProgram({"python3", "-m", "torch.distributed.run", "train.py"}, ""));
  EXPECT_TRUE(IsPythonProgram({"/opt/venv/bin/python3.11", "-c", "print(1)"}, ""));
  EXPECT_TRUE(IsPythonProgram({"./python"}, "\x7f" "ELF"));  // the name decides, not the file
  EXPECT_FALSE(IsPythonProgram({}, ""));
}

TEST(PythonProgram, PythonLaunchers) {
  EXPECT_TRUE(IsPythonProgram({"torchrun", "--nproc-per-node=2", "train.py"}, ""));
  EXPECT_TRUE(IsPythonProgram({"/usr/local/bin/deepspeed", "train.py"}, ""));
  EXPECT_TRUE(IsPythonProgram({"accelerate", "launch", "train.py"}, ""));
  EXPECT_TRUE(IsPythonProgram({"accelerate-launch", "train.py"}, ""));
  // `accelerate` without `launch` is decided by its file, like any other script.
  EXPECT_FALSE(IsPythonProgram({"accelerate", "env"}, ""));
  EXPECT_TRUE(IsPythonProgram({"accelerate", "env"}, "#!/venv/bin/python3\n"));
}

TEST(PythonProgram, ShebangNamingPython) {
  const std::vector<std::string> script = {"./train.py", "--epochs", "1"};
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/python3\nimport torch\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#! /opt/conda/bin/python3.11 -u\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/env python3\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/env python\r\nprint(1)\r\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/env -S python3 -u\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/env -i PYTHONUNBUFFERED=1 python3\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/env -u HOME python3\n"));
  EXPECT_TRUE(IsPythonProgram(script, "#!/usr/bin/python3"));  // no newline at all
  // pip's header when the venv's path is too long for a shebang line.
  EXPECT_TRUE(IsPythonProgram(
      {"/very/long/venv/bin/torchrun-like"},
      "#!/bin/sh\n'''exec' /very/long/venv/bin/python3 \"$0\" \"$@\"\n' '''\n"));
}

TEST(PythonProgram, NotPython) {
  const std::vector<std::string> program = {"./run.sh"};
  EXPECT_FALSE(IsPythonProgram(program, ""));                        // unreadable
  EXPECT_FALSE(IsPythonProgram(program, "\x7f" "ELF\x02\x01\x01"));  // compiled
  EXPECT_FALSE(IsPythonProgram(program, "#!/bin/bash\nexec python3 train.py\n"));
  EXPECT_FALSE(IsPythonProgram(program, "#!/usr/bin/env bash\n"));
  EXPECT_FALSE(IsPythonProgram(program, "#!/usr/bin/env -u python3 bash\n"));  // -u's argument
  EXPECT_FALSE(IsPythonProgram(program, "#!/bin/sh\necho '''exec' python3\n"));
  EXPECT_FALSE(IsPythonProgram(program, "# python3 comment, no shebang\n"));
  EXPECT_FALSE(IsPythonProgram(program, "#!\n"));
  EXPECT_FALSE(IsPythonProgram({"/usr/bin/python3-config", "--includes"}, "#!/bin/sh\n"));
  EXPECT_FALSE(IsPythonProgram({"nvcc", "python.cu"}, "\x7f" "ELF"));  // args do not count
  // The shebang, not the file name, decides for scripts.
  EXPECT_FALSE(IsPythonProgram({"./train.py"}, "#!/bin/bash\n"));
}

TEST(PythonProgram, HookDirGoesFirstAndTheExistingPathIsKept) {
  EXPECT_EQ(PrependPythonPath("/p/lib/gprof-run/python", ""), "/p/lib/gprof-run/python");
  EXPECT_EQ(PrependPythonPath("/hook", "/a:/b"), "/hook:/a:/b");
  EXPECT_EQ(PrependPythonPath("/hook", "/hook:/a"), "/hook:/a");  // gprof-run under gprof-run
  EXPECT_EQ(PrependPythonPath("/hook", "/hook"), "/hook");
  EXPECT_EQ(PrependPythonPath("/hook", "/hooks:/a"), "/hook:/hooks:/a");
  EXPECT_EQ(PrependPythonPath("/hook", "/a:/hook"), "/hook:/a:/hook");
}

}  // namespace
}  // namespace gprof::launcher
