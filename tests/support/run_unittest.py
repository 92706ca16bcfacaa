"""Runs Python unittest files as one ctest entry whose status says what ran.

    python run_unittest.py [--start-dir DIR --pattern GLOB | FILE...]

Exit status: 0 when the tests passed and at least one of them ran; 77 (ctest's
SKIP_RETURN_CODE, so ctest reports Skipped) when every test was skipped, e.g. for a missing
prerequisite, with the skip reasons printed; 1 on a failure or error, or when no test was found at
all (a renamed file or class must not leave an empty suite that passes). Tests skipped next to
tests that ran are listed, and the entry passes: ctest's count stays honest about the entry, and
the list says what was left out. Standard library only.
"""
import argparse
import collections
import importlib.util
import os
import sys
import unittest


def load(args):
    loader = unittest.TestLoader()
    if args.start_dir:
        return loader.discover(args.start_dir, pattern=args.pattern)
    suite = unittest.TestSuite()
    for path in args.files:
        path = os.path.abspath(path)
        sys.path.insert(0, os.path.dirname(path))
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        suite.addTests(loader.loadTestsFromModule(module))
    return suite


def verdict(result):
    """The exit status for a finished unittest result (see the module's docstring)."""
    if not result.wasSuccessful():
        return 1
    if result.testsRun == 0:
        print("FAILED: no test was found: the suite is empty")
        return 1
    if result.skipped:
        reasons = collections.Counter(reason for _, reason in result.skipped)
        for reason, n in reasons.items():
            print("skipped %d: %s" % (n, reason))
    if len(result.skipped) == result.testsRun:
        print("SKIPPED: all %d tests skipped" % result.testsRun)
        return 77
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--start-dir")
    parser.add_argument("--pattern", default="test_*.py")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if bool(args.start_dir) == bool(args.files):
        parser.error("give either --start-dir or test files")
    result = unittest.TextTestRunner(verbosity=2).run(load(args))
    sys.exit(verdict(result))


if __name__ == "__main__":
    main()
