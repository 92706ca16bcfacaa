"""Shared by the hook's test files: writing the small programs and packages they run, and the
entry that runs a torch test file under the Python with torch."""
import os
import subprocess
import sys
import textwrap
import unittest


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
    executable; otherwise unittest.main()."""
    if len(sys.argv) == 2 and sys.argv[1].startswith("--torch-python="):
        torch_python = sys.argv[1][len("--torch-python="):]
        if not torch_python or not os.path.isfile(torch_python) or \
                not os.access(torch_python, os.X_OK):
            print("SKIPPED: no Python with torch (GPROF_TORCH_PYTHON=%s); scripts/setup installs "
                  "one when the disk has 12 GB free" % torch_python)
            sys.exit(77)
        sys.exit(subprocess.call([torch_python, os.path.abspath(test_file), "-v"]))
    unittest.main(module="__main__")
