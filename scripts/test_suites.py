#!/usr/bin/env python3
"""The suites line of scripts/test, counted from what actually ran.

    test_suites.py --labels LABELS.json --junit CTEST.xml [--sanitizer XML]... [--fuzz-ran FILE]

LABELS.json is `ctest --show-only=json-v1` of the main build (each test's labels), CTEST.xml its
`ctest --output-junit` of the run; --sanitizer names the JUnit / gtest XML files the sanitizer
runs wrote (scripts/sanitize), --fuzz-ran the file scripts/fuzz writes (one line per target it
fuzzed). A test counts in a suite when it ran and passed: skipped, not run, disabled and failed
tests do not count. Prints

    suites: unit N, process N, standin N, torch N, browser N, consumers N, sanitizers N, fuzz N,
            gpu N

(with "(skipped: no GPU)" when the gpu tests skipped). With --require (scripts/test passes it
under CI=true) any of the first eight at 0 fails, naming what is missing. Standard library only.
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET

SUITES = ("unit", "process", "standin", "torch", "browser", "consumers", "sanitizers", "fuzz")

# What an empty suite means is missing.
PREREQUISITE = {
    "unit": "the build's GoogleTest tests (scripts/setup did not build them?)",
    "process": "gprof-run and the injection library (the build's process tests)",
    "standin": "nvcc (the CUDA compiler: CUDACXX or PATH): without it the CUDA/CUPTI stand-in "
               "and its tests are not built",
    "torch": "a Python with PyPI torch (GPROF_TORCH_PYTHON; scripts/setup installs one when the "
             "disk has 12 GB free)",
    "browser": "chromium (Debian's package; scripts/setup installs it): the browser tests skip "
               "without it",
    "consumers": "a Python with HTA and TensorBoard's profiler plugin (GPROF_CONSUMERS_PYTHON; "
                 "scripts/test installs one with scripts/consumers-venv), and the torch tests' "
                 "runs they read (GPROF_TORCH_PYTHON)",
    "sanitizers": "the sanitizer runs (scripts/sanitize; GPROF_TEST_SANITIZERS=0 turns them off)",
    "fuzz": "the fuzzers (scripts/fuzz, clang with libFuzzer; GPROF_TEST_FUZZ=0 turns them off) "
            "and the fuzz corpus replays (label fuzz)",
}


def passed_cases(path):
    """Names of the test cases in a JUnit (ctest) or gtest XML file that ran and passed."""
    if not path or not os.path.exists(path):
        return []
    names = []
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            continue
        if case.find("skipped") is not None:
            continue
        status = case.get("status", "run")
        result = case.get("result", "completed")
        if status != "run" or result not in ("completed", ""):
            continue
        name = case.get("name", "")
        cls = case.get("classname", "")
        names.append(name if not cls or cls == name else cls + "." + name)
    return names


def skipped_cases(path):
    if not path or not os.path.exists(path):
        return []
    return [c.get("name", "") for c in ET.parse(path).getroot().iter("testcase")
            if c.find("skipped") is not None or c.get("status") in ("notrun", "disabled")]


def labels_by_test(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for test in data.get("tests", []):
        labels = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value") or []
        out[test["name"]] = set(labels if isinstance(labels, list) else [labels])
    return out


def count(args):
    labels = labels_by_test(args.labels)
    counts = dict.fromkeys(SUITES + ("gpu",), 0)
    for name in passed_cases(args.junit):
        for label in labels.get(name, ()):
            if label in counts and label not in ("sanitizers",):
                counts[label] += 1
    gpu_skipped = sum(1 for name in skipped_cases(args.junit) if "gpu" in labels.get(name, ()))
    for xml in args.sanitizer:
        counts["sanitizers"] += len(passed_cases(xml))
    if args.fuzz_ran and os.path.exists(args.fuzz_ran):
        with open(args.fuzz_ran) as f:
            counts["fuzz"] += sum(1 for line in f if line.strip())
    return counts, gpu_skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", required=True)
    parser.add_argument("--junit", required=True)
    parser.add_argument("--sanitizer", action="append", default=[])
    parser.add_argument("--fuzz-ran")
    parser.add_argument("--require", action="store_true")
    args = parser.parse_args()
    counts, gpu_skipped = count(args)
    line = "suites: " + ", ".join("%s %d" % (s, counts[s]) for s in SUITES + ("gpu",))
    if counts["gpu"] == 0 and gpu_skipped:
        line += " (skipped: no GPU)"
    empty = [s for s in SUITES if counts[s] == 0]
    if args.require:
        for s in empty:
            print("suites: %s is empty under CI: missing %s" % (s, PREREQUISITE[s]),
                  file=sys.stderr)
    print(line)
    sys.exit(1 if args.require and empty else 0)


if __name__ == "__main__":
    main()
