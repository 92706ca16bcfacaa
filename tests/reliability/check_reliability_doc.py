#!/usr/bin/env python3
"""Checks docs/RELIABILITY.md against the tests that exist.

  check_reliability_doc.py DOC BIN_DIR

Every table row of the fault matrix must name at least one test as `binary: Suite.Test` (a `*`
matches any parameter), every named test must exist in BIN_DIR/binary (--gtest_list_tests), and
every test of fault_matrix_test must be named somewhere in the document. Exit 1 with a list of
what is wrong otherwise.
"""
import fnmatch
import os
import re
import subprocess
import sys

TEST_REF = re.compile(r"`([a-z0-9_]+_test): ([A-Za-z0-9_/.*]+)`")


def list_tests(binary):
    out = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True,
                         text=True).stdout
    names, suite = [], ""
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split()[0]
        else:
            names.append(suite + line.split()[0])
    return names


def main(doc_path, bin_dir):
    errors = []
    rows = 0
    refs = []
    in_fault_table = False
    with open(doc_path, encoding="utf-8") as doc:
        for number, line in enumerate(doc, 1):
            if line.startswith("| Fault |"):
                in_fault_table = True
                continue
            if not line.startswith("|"):
                in_fault_table = False
                continue
            if not in_fault_table or line.startswith("|---"):
                continue
            rows += 1
            found = TEST_REF.findall(line)
            if not found:
                errors.append(f"{doc_path}:{number}: a row without a test")
            refs += [(number, b, t) for b, t in found]
    cache = {}
    for number, binary, pattern in refs:
        path = os.path.join(bin_dir, binary)
        if binary not in cache:
            cache[binary] = list_tests(path) if os.access(path, os.X_OK) else None
        if cache[binary] is None:
            errors.append(f"{doc_path}:{number}: no test binary {path}")
        elif not any(fnmatch.fnmatchcase(n, pattern) for n in cache[binary]):
            errors.append(f"{doc_path}:{number}: {binary} has no test {pattern}")
    matrix = os.path.join(bin_dir, "fault_matrix_test")
    named = [t for _, b, t in refs if b == "fault_matrix_test"]
    for test in list_tests(matrix):
        if not any(fnmatch.fnmatchcase(test, p) for p in named):
            errors.append(f"{doc_path}: fault_matrix_test's {test} is in no row")
    for e in errors:
        print(e)
    print(f"reliability doc: {rows} rows, {len(refs)} test references, "
          f"{len(errors)} problem(s)")
    return 1 if errors or rows == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
