"""Tests of gprof-run's Python start-up hook (python/gprof_run_hook/), as real Python processes.

Each test runs a small program with and without the hook folder first on PYTHONPATH and compares
what a user would see: stdout, stderr, exit status, marker files written by an existing
sitecustomize/usercustomize or by a stub `torch` package. The stub is a package in a temporary
directory; the real torch is never imported here. Standard library only.

The hook folder under test is $PYTHON_HOOK_TEST_DIR (ctest passes the build tree's copy, the one
gprof-run uses), else the source folder next to this file.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import zipfile

from hook_test_files import write_file

HOOK_DIR = os.environ.get("PYTHON_HOOK_TEST_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, "gprof_run_hook")
HOOK_DIR = os.path.realpath(HOOK_DIR)

# Variables of the test's own environment that would change how the child starts.
_DROPPED = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONNOUSERSITE", "PYTHONVERBOSE", "PYTHONSAFEPATH",
            "PYTHONINSPECT", "GPROF_LOG_LEVEL", "HOOK_TEST_MARKER", "HOOK_TEST_TORCH_MARKER")

TORCH_IMPORTED_MARKER = "torch imported"


class HookTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gprof_hook_test.")
        self.tmp = os.path.realpath(self._tmp.name)
        self.marker = os.path.join(self.tmp, "marker.txt")
        self.torch_marker = os.path.join(self.tmp, "torch_marker.txt")

    def tearDown(self):
        self._tmp.cleanup()

    # ---- helpers -------------------------------------------------------------------------------

    def write(self, relpath, text):
        return write_file(self.tmp, relpath, text)

    def read_marker(self, path=None):
        path = path or self.marker
        if not os.path.exists(path):
            return ""
        with open(path) as f:
            return f.read()

    def reset_markers(self):
        for path in (self.marker, self.torch_marker):
            if os.path.exists(path):
                os.remove(path)

    def existing_sitecustomize(self, folder="site_dir", extra=""):
        """A sitecustomize of the environment's own, appending one line to the marker."""
        self.write(folder + "/sitecustomize.py", """\
            import os
            with open(os.environ["HOOK_TEST_MARKER"], "a") as f:
                f.write("sitecustomize\\n")
            VALUE = "from the environment's sitecustomize"
            """ + textwrap.dedent(extra))
        return os.path.join(self.tmp, folder)

    def stub_torch(self, folder="stub", body=""):
        """A fake `torch` package (with a `torch.nn` submodule) that appends to the torch marker
        when it is executed. It reports whether gprof-run's hook had already fired while torch's
        own code ran (it must not: the hook fires after the import finished)."""
        self.write(folder + "/torch/__init__.py", """\
            import os, sys
            with open(os.environ["HOOK_TEST_TORCH_MARKER"], "a") as f:
                f.write("%s\\n")
            _hook = sys.modules.get("_gprof_run_hook")
            CALLS_DURING_IMPORT = None if _hook is None else _hook.torch_hook_calls
            __version__ = "0.0+stub"
            """ % TORCH_IMPORTED_MARKER + textwrap.dedent(body))
        self.write(folder + "/torch/nn/__init__.py", "NAME = 'torch.nn stub'\n")
        return os.path.join(self.tmp, folder)

    def run_python(self, code, path=(), hook=True, hook_dir=None, env=None, args=()):
        environment = {k: v for k, v in os.environ.items() if k not in _DROPPED}
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the hook folder
        environment["HOOK_TEST_MARKER"] = self.marker
        environment["HOOK_TEST_TORCH_MARKER"] = self.torch_marker
        entries = ([hook_dir or HOOK_DIR] if hook else []) + list(path)
        if entries:
            environment["PYTHONPATH"] = os.pathsep.join(entries)
        environment.update(env or {})
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)] + list(args),
                              env=environment, cwd=self.tmp, capture_output=True, timeout=120)

    def run_both(self, code, path=(), **kwargs):
        """Runs `code` without and with the hook; returns (without, with). Markers are reset
        before each run; after the call they hold what the run with the hook wrote."""
        self.reset_markers()
        without = self.run_python(code, path, hook=False, **kwargs)
        self.reset_markers()
        with_hook = self.run_python(code, path, hook=True, **kwargs)
        return without, with_hook

    def assertSameForTheProgram(self, without, with_hook):
        self.assertEqual(with_hook.stdout, without.stdout)
        self.assertEqual(with_hook.stderr, without.stderr)
        self.assertEqual(with_hook.returncode, without.returncode)

    def copy_of_hook(self, name="hook_copy"):
        dst = os.path.join(self.tmp, name)
        shutil.copytree(HOOK_DIR, dst, ignore=shutil.ignore_patterns("__pycache__"))
        return dst

    def plant(self, hook_dir, python_text):
        """Appends code to a copy's _gprof_run_hook.py: a fault planted in the hook itself."""
        with open(os.path.join(hook_dir, "_gprof_run_hook.py"), "a") as f:
            f.write("\n" + textwrap.dedent(python_text))

    # ---- (a) chaining to the environment's own sitecustomize / usercustomize -------------------

    def test_existing_sitecustomize_runs_exactly_once_and_is_the_sitecustomize_module(self):
        site_dir = self.existing_sitecustomize()
        code = """\
            import sitecustomize, sys
            print(sitecustomize.__file__)
            print(sitecustomize.VALUE)
            print(sys.modules["sitecustomize"] is sitecustomize)
            """
        without, with_hook = self.run_both(code, [site_dir])
        self.assertEqual(without.returncode, 0, without.stderr)
        self.assertSameForTheProgram(without, with_hook)
        self.assertIn(os.path.join(site_dir, "sitecustomize.py"), with_hook.stdout.decode())
        self.assertEqual(self.read_marker(), "sitecustomize\n")  # once, not twice, not zero

    def test_existing_sitecustomize_in_a_zip_on_the_path_runs_once(self):
        source = self.existing_sitecustomize("zip_src")
        archive = os.path.join(self.tmp, "site.zip")
        with zipfile.ZipFile(archive, "w") as z:
            z.write(os.path.join(source, "sitecustomize.py"), "sitecustomize.py")
        without, with_hook = self.run_both("import sitecustomize; print(sitecustomize.VALUE)",
                                           [archive])
        self.assertEqual(without.returncode, 0, without.stderr)
        self.assertSameForTheProgram(without, with_hook)
        self.assertEqual(self.read_marker(), "sitecustomize\n")

    def test_the_same_sitecustomize_as_without_the_hook_when_none_is_planted(self):
        # Whatever this Python installation has (Debian's, a venv's, none): the program sees the
        # same module with the hook, except that "none" becomes ours.
        code = """\
            import sys
            m = sys.modules.get("sitecustomize")
            print(getattr(m, "__file__", None))
            """
        without, with_hook = self.run_both(code)
        self.assertEqual(with_hook.returncode, 0, with_hook.stderr)
        self.assertEqual(with_hook.stderr, b"")
        if without.stdout.strip() != b"None":
            self.assertEqual(with_hook.stdout, without.stdout)
        else:
            self.assertEqual(with_hook.stdout.decode().strip(),
                             os.path.join(HOOK_DIR, "sitecustomize.py"))

    def test_usercustomize_still_runs_once_after_sitecustomize(self):
        site_dir = self.existing_sitecustomize()
        self.write("site_dir/usercustomize.py", """\
            import os
            with open(os.environ["HOOK_TEST_MARKER"], "a") as f:
                f.write("usercustomize\\n")
            """)
        probe = self.run_python("import site; print(site.ENABLE_USER_SITE)", hook=False)
        if probe.stdout.strip() != b"True":
            self.skipTest("user site is disabled here, so Python never imports usercustomize")
        without, with_hook = self.run_both("import usercustomize; print('ran')", [site_dir])
        self.assertSameForTheProgram(without, with_hook)
        self.assertEqual(self.read_marker(), "sitecustomize\nusercustomize\n")

    def test_a_failing_sitecustomize_is_reported_by_python_as_without_the_hook(self):
        site_dir = self.existing_sitecustomize(extra='raise ValueError("boom in site")\n')
        stub = self.stub_torch()
        code = """\
            import sys
            print("sitecustomize" in sys.modules)
            import torch
            print(sys.modules["_gprof_run_hook"].torch_hook_calls
                  if "_gprof_run_hook" in sys.modules else 1)
            """
        without, with_hook = self.run_both(code, [site_dir, stub])
        self.assertIn(b"Error in sitecustomize", without.stderr)
        self.assertIn(b"ValueError: boom in site", without.stderr)
        self.assertSameForTheProgram(without, with_hook)
        self.assertEqual(self.read_marker(), "sitecustomize\n")

    def test_hook_folder_twice_on_the_path_still_runs_everything_once(self):
        # gprof-run under gprof-run from two installs: two copies of the hook, then the
        # environment's sitecustomize.
        site_dir = self.existing_sitecustomize()
        stub = self.stub_torch()
        second = self.copy_of_hook("second_install")
        code = """\
            import sys, torch
            print(sys.modules["_gprof_run_hook"].torch_hook_calls)
            print(sys.modules["sitecustomize"].VALUE)
            """
        self.reset_markers()
        r = self.run_python(code, [second, site_dir, stub])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().split("\n")[0], "1")
        self.assertEqual(r.stderr, b"")
        self.assertEqual(self.read_marker(), "sitecustomize\n")

    # ---- (b) the program imports torch -----------------------------------------------------------

    def test_import_torch_calls_on_torch_imported_once_after_torch_finished(self):
        stub = self.stub_torch()
        code = """\
            import importlib, sys, threading
            import torch
            import torch.nn
            import torch as again
            importlib.import_module("torch")
            t = threading.Thread(target=lambda: importlib.import_module("torch.nn"))
            t.start(); t.join()
            hook = sys.modules["_gprof_run_hook"]
            print("calls", hook.torch_hook_calls)
            print("calls while torch ran", torch.CALLS_DURING_IMPORT)
            print("loader", type(torch.__loader__).__name__,
                  torch.__spec__.loader is torch.__loader__)
            print("finder left", any(type(f).__name__ == "_TorchFinder" for f in sys.meta_path))
            print(torch.__version__, torch.nn.NAME)
            """
        r = self.run_python(code, [stub])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, b"")
        out = r.stdout.decode()
        self.assertIn("calls 1\n", out)
        self.assertIn("calls while torch ran 0\n", out)  # fired after torch's code, not during
        self.assertIn("loader SourceFileLoader True\n", out)  # torch sees its own loader
        self.assertIn("finder left False\n", out)  # the finder took itself off sys.meta_path
        self.assertIn("0.0+stub torch.nn stub\n", out)
        self.assertEqual(self.read_marker(self.torch_marker), TORCH_IMPORTED_MARKER + "\n")

    def test_torch_imported_by_the_environments_sitecustomize_is_seen_once(self):
        site_dir = self.existing_sitecustomize(extra="import torch\n")
        stub = self.stub_torch()
        r = self.run_python("""\
            import sys, torch
            print(sys.modules["_gprof_run_hook"].torch_hook_calls)
            """, [site_dir, stub])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"1\n")
        self.assertEqual(self.read_marker(self.torch_marker), TORCH_IMPORTED_MARKER + "\n")

    def test_a_failing_torch_import_reaches_the_program_unchanged_and_does_not_fire(self):
        stub = self.stub_torch(body='raise ImportError("libtorch_cuda.so: cannot open")\n')
        code = """\
            import sys
            try:
                import torch
            except ImportError as e:
                print("ImportError:", e)
            print("torch" in sys.modules)
            hook = sys.modules.get("_gprof_run_hook")
            print("fired" if hook is not None and hook.torch_hook_calls else "not fired")
            """
        without, with_hook = self.run_both(code, [stub])
        self.assertSameForTheProgram(without, with_hook)
        self.assertIn(b"ImportError: libtorch_cuda.so: cannot open\n", with_hook.stdout)
        self.assertIn(b"not fired", with_hook.stdout)

    def test_looking_for_torch_without_importing_it_does_not_fire(self):
        # `importlib.util.find_spec("torch")` is how many libraries check that torch is there.
        stub = self.stub_torch()
        code = """\
            import importlib.util, sys
            print(importlib.util.find_spec("torch") is not None)
            print("torch" in sys.modules)
            hook = sys.modules.get("_gprof_run_hook")
            print(hook.torch_hook_calls if hook is not None else 0)
            """
        without, with_hook = self.run_both(code, [stub])
        self.assertSameForTheProgram(without, with_hook)
        self.assertEqual(with_hook.stdout, b"True\nFalse\n0\n")
        self.assertEqual(self.read_marker(self.torch_marker), "")

    # ---- (c) a program that never imports torch ----------------------------------------------------

    def test_program_without_torch_is_unchanged_and_nothing_torch_like_is_imported(self):
        stub = self.stub_torch()  # importable, so an eager import by the hook would show
        code = """\
            import json, sys
            print(json.dumps({"args": sys.argv[1:], "sum": sum(range(100))}))
            sys.stdout.write("no newline at the end")
            sys.exit(3)
            """
        without, with_hook = self.run_both(code, [stub], args=["a", "b c"])
        self.assertEqual(without.returncode, 3)
        self.assertSameForTheProgram(without, with_hook)
        self.assertEqual(self.read_marker(self.torch_marker), "")

        modules = """\
            import sys
            print("\\n".join(sorted(sys.modules)))
            """
        without, with_hook = self.run_both(modules, [stub])
        added = set(with_hook.stdout.decode().split()) - set(without.stdout.decode().split())
        # Only the hook's own two modules (what this installation's site imports anyway stays).
        self.assertLessEqual(added, {"sitecustomize", "_gprof_run_hook"})
        self.assertFalse([m for m in with_hook.stdout.decode().split() if "torch" in m])
        self.assertEqual(self.read_marker(self.torch_marker), "")

    # ---- (d) faults inside the hook ------------------------------------------------------------------

    def check_fault_is_invisible(self, hook_dir, code, path):
        """The program with a faulty hook copy first on PYTHONPATH: same stdout, stderr and
        status as without any hook, the environment's sitecustomize ran once; at
        GPROF_LOG_LEVEL=debug one line on stderr says what failed."""
        without = self.run_python(code, path, hook=False)
        self.reset_markers()
        faulty = self.run_python(code, path, hook_dir=hook_dir)
        self.assertSameForTheProgram(without, faulty)
        self.assertEqual(self.read_marker(), "sitecustomize\n")
        self.reset_markers()
        debug = self.run_python(code, path, hook_dir=hook_dir, env={"GPROF_LOG_LEVEL": "debug"})
        self.assertEqual(debug.stdout, without.stdout)
        self.assertEqual(debug.returncode, without.returncode)
        lines = debug.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, debug.stderr)
        self.assertTrue(lines[0].startswith("gprof-run: python hook: "), lines[0])
        self.assertIn("planted", lines[0])
        return faulty

    def fault_program(self):
        site_dir = self.existing_sitecustomize()
        stub = self.stub_torch()
        code = """\
            import sys, torch, torch.nn
            print(torch.__version__, torch.nn.NAME, sys.modules["sitecustomize"].VALUE)
            sys.exit(5)
            """
        return code, [site_dir, stub]

    def test_fault_hook_module_does_not_load(self):
        code, path = self.fault_program()
        hook = self.copy_of_hook()
        with open(os.path.join(hook, "_gprof_run_hook.py"), "w") as f:
            f.write("raise RuntimeError('planted: the hook module is broken')\n")
        self.check_fault_is_invisible(hook, code, path)

    def test_fault_in_install(self):
        code, path = self.fault_program()
        hook = self.copy_of_hook()
        self.plant(hook, """\
            def install():
                raise RuntimeError("planted fault in install")
            """)
        self.check_fault_is_invisible(hook, code, path)

    def test_fault_in_on_torch_imported(self):
        code, path = self.fault_program()
        hook = self.copy_of_hook()
        self.plant(hook, """\
            def on_torch_imported(torch_module):
                raise RuntimeError("planted fault in on_torch_imported")
            """)
        self.check_fault_is_invisible(hook, code, path)

    def test_fault_in_the_finder(self):
        code, path = self.fault_program()
        hook = self.copy_of_hook()
        self.plant(hook, """\
            class _NotifyingLoader:
                def __init__(self, loader):
                    raise RuntimeError("planted fault wrapping torch's loader")
            """)
        self.check_fault_is_invisible(hook, code, path)


if __name__ == "__main__":
    unittest.main()
