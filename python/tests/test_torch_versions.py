"""What gprof-run's Python hook does with a torch whose profiler API differs from the pinned
one (python/gprof_run_hook/_gprof_run_profiler_config.py, docs/PYTORCH.md "Torch releases"):
real Python processes that import a fake `torch` package (never the real one) through the hook.
The fake is PyTorch-shaped where the hook looks (torch._C, torch.autograd's profiler entry
points) and records the ProfilerConfig the hook builds. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from hook_test_files import DROPPED_ENV, HOOK_DIR, write_file

# A fake torch: `autograd` holds CONFIG_CLASS (or nothing, with CONFIG_CLASS = None); the
# profiler on/off calls record what they got.
FAKE_TORCH = """\
import types
__version__ = "2.99.0+fake"
_C = types.SimpleNamespace(_profiler=types.SimpleNamespace())
ENABLED = []
class ProfilerState:
    NVTX = "NVTX"
    ITT = "ITT"
{config_class}
def _enable_profiler(config, activities):
    ENABLED.append(config)
def _disable_profiler():
    pass
autograd = types.SimpleNamespace(ProfilerState=ProfilerState, _enable_profiler=_enable_profiler,
                                 _disable_profiler=_disable_profiler)
if CONFIG_CLASS is not None:
    autograd.ProfilerConfig = CONFIG_CLASS
cuda = types.SimpleNamespace(nvtx=types.SimpleNamespace(mark=lambda message: None))
"""

# torch 1.x/2.x-like ProfilerConfig taking keywords only and no experimental_config: the
# positional call torch 2.15 takes (7 arguments) is refused by it.
KEYWORD_ONLY_CONFIG = """\
class CONFIG_CLASS:
    def __init__(self, *, state, report_input_shapes, profile_memory, with_stack, with_flops,
                 with_modules):
        self.state, self.shapes = state, report_input_shapes
"""

PROGRAM = """\
import json, sys
import torch
hook = sys.modules.get("_gprof_run_torch")
print(json.dumps({"ops_threads": getattr(hook, "ops_enabled_threads", None),
                  "configs": [[c.state, c.shapes] for c in torch.ENABLED]}))
"""


class TorchVersionsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gprof_torch_versions_test.")
        self.tmp = os.path.realpath(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def run_with_fake_torch(self, config_class, env=None):
        write_file(self.tmp, "fake/torch/__init__.py",
                   FAKE_TORCH.format(config_class=config_class))
        environment = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        environment.update({"PYTHONPATH": os.pathsep.join([HOOK_DIR, self.tmp + "/fake"]),
                            "PYTHONDONTWRITEBYTECODE": "1", "GPROF_TORCH_STEPS": "off"})
        environment.update(env or {})
        program = write_file(self.tmp, "prog.py", PROGRAM)
        r = subprocess.run([sys.executable, program], env=environment, cwd=self.tmp,
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return json.loads(r.stdout.decode().splitlines()[-1]), r.stderr.decode()

    def test_torch_without_profiler_config_says_its_version_and_what_is_missing_in_one_line(self):
        result, stderr = self.run_with_fake_torch("CONFIG_CLASS = None")
        self.assertEqual(result, {"ops_threads": 0, "configs": []}, stderr)
        lines = stderr.splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn("torch 2.99.0+fake", lines[0])
        self.assertIn("no torch.autograd.ProfilerConfig", lines[0])
        self.assertIn("no torch ops", lines[0])

    def test_profiler_config_taking_keywords_only_without_experimental_config_gets_op_ranges(self):
        result, stderr = self.run_with_fake_torch(KEYWORD_ONLY_CONFIG,
                                                  env={"GPROF_RECORD_SHAPES": "1"})
        self.assertEqual(stderr, "")
        self.assertEqual(result, {"ops_threads": 1, "configs": [["NVTX", True]]})

    def test_profiler_config_with_a_parameter_unknown_to_gprof_run_is_named_on_stderr(self):
        config = KEYWORD_ONLY_CONFIG.replace("with_modules):", "with_modules, new_thing):")
        result, stderr = self.run_with_fake_torch(config)
        self.assertEqual(result["configs"], [])
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertIn("torch 2.99.0+fake", stderr)
        self.assertIn("(new_thing)", stderr)


if __name__ == "__main__":
    unittest.main()
