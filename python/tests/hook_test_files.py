"""Shared by the hook's test files: writing the small programs and packages they run, and the
entry that runs a torch test file under the Python with torch."""
import importlib.util
import os
import subprocess
import sys
import textwrap
import unittest

# The hook folder under test: the build tree's copy (ctest sets PYTHON_HOOK_TEST_DIR), else the
# source tree's.
HOOK_DIR = os.path.realpath(os.environ.get("PYTHON_HOOK_TEST_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, "gprof_run_hook"))

HAVE_TORCH = importlib.util.find_spec("torch") is not None  # no import: that takes seconds

# Variables of the test's own environment that would change how a child program runs.
DROPPED_ENV = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONNOUSERSITE", "PYTHONVERBOSE",
               "PYTHONSAFEPATH", "PYTHONINSPECT", "GPROF_LOG_LEVEL", "GPROF_TORCH_OPS",
               "GPROF_RECORD_SHAPES", "GPROF_TORCH_STEPS", "GPROF_TORCH_MEMORY",
               "GPROF_OUTPUT_DIR", "GPROF_PYTHON_SAMPLING", "NVTX_INJECTION64_PATH",
               "CUDA_INJECTION64_PATH", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD")


def write_file(root, relpath, text):
    """Writes `text` (dedented) to root/relpath, creating folders; returns the path."""
    path = os.path.join(root, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path


def torch_test_main(test_file):
    """The `__main__` of a test file that needs torch: with `--torch-python=PATH` (ctest's
    entry) the file runs under PATH, or says SKIPPED and exits 77 when PATH is empty or not an
    executable; otherwise unittest.main(), exiting 77 when every test skipped (PATH's Python
    cannot import torch)."""
    if len(sys.argv) == 2 and sys.argv[1].startswith("--torch-python="):
        torch_python = sys.argv[1][len("--torch-python="):]
        if not torch_python or not os.path.isfile(torch_python) or \
                not os.access(torch_python, os.X_OK):
            print("SKIPPED: no Python with torch (GPROF_TORCH_PYTHON=%s); scripts/test installs "
                  "one when the disk has 12 GB free" % torch_python)
            sys.exit(77)
        sys.exit(subprocess.call([torch_python, os.path.abspath(test_file), "-v"]))
    program = unittest.main(module="__main__", exit=False)
    sys.exit(skips_as_77(program.result))


def skips_as_77(result):
    """Exit status of a finished run: 0 passed (at least one test ran), 77 every test skipped
    (ctest's SKIP_RETURN_CODE: a Python without torch is Skipped, not Passed), 1 a failure or no
    test at all (same rule as tests/support/run_unittest.py)."""
    if not result.wasSuccessful():
        return 1
    if result.testsRun == 0:
        print("FAILED: no test was found")
        return 1
    if len(result.skipped) == result.testsRun:
        print("SKIPPED: all %d tests skipped: %s" % (result.testsRun, result.skipped[0][1]))
        return 77
    return 0
