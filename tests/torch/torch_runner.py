"""What the torch tests share: where torch and gprof-run are, and a TestCase base that runs
`gprof-run -q -o TMP/NAME FLAGS python SCRIPT ARGS` on a script of this folder.

Environment: TORCH_PYTHON (a Python with torch), GPROF_RUN (the gprof-run under test),
TORCH_OUTPUTS (optional: where the runs that the consumers tests read are kept).
"""
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "")
GPROF_RUN = os.environ.get("GPROF_RUN", "")
# The runs that tests/consumers hands to HTA and TensorBoard's profiler plugin (which are not in
# the torch venv) stay in TORCH_OUTPUTS/NAME after the tests; CMake sets it to a folder of the
# build. Unset: they go to the class's temporary folder like the others.
TORCH_OUTPUTS = os.environ.get("TORCH_OUTPUTS", "")



def kept_output(name, tmp):
    """The output folder of a run the consumers tests read: TORCH_OUTPUTS/name, emptied first
    (no stale run), or tmp/name without TORCH_OUTPUTS."""
    if not TORCH_OUTPUTS:
        return os.path.join(tmp, name)
    path = os.path.join(TORCH_OUTPUTS, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(TORCH_OUTPUTS, exist_ok=True)
    return path


needs_torch = unittest.skipUnless(
    TORCH_PYTHON and os.path.exists(TORCH_PYTHON) and GPROF_RUN,
    "no Python with torch (TORCH_PYTHON) or no gprof-run (GPROF_RUN)")


class GprofTorchCase(unittest.TestCase):
    """One temporary folder per class; gprof() runs a script of this folder under gprof-run and
    asserts that it exited 0."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="gprof_%s." % cls.__name__)
        cls.tmp = cls._tmp.name

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def gprof(self, name, flags, script, *args):
        out = os.path.join(self.tmp, name)
        cmd = [GPROF_RUN, "-q", "-o", out] + flags + [TORCH_PYTHON, os.path.join(HERE, script)]
        p = subprocess.run(cmd + list(args), cwd=HERE, capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return out, p
