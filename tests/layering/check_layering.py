#!/usr/bin/env python3
"""Checks the include rules of docs/ARCHITECTURE.md by reading every #include line, and the
size rule: no product source over MAX_LINES lines.

The build enforces the module level already (a module's headers are on the include path only of
targets that link it, cmake/GprofModules.cmake); this checker also covers what the compiler
cannot see: the collector's and the outputs' subfolders, CUDA/CUPTI/NVTX headers outside the
folders allowed to use them, and modules that reach a header through a link they should not have.

  check_layering.py SOURCE_ROOT          exit 0 when every rule holds, 1 with one line per breach
  check_layering.py --self-test          plants bad includes and a long file in a temporary tree,
                                         expects failures
"""
import os
import re
import sys
import tempfile

# Quoted includes: folder -> the prefixes it may include (its own first). The most specific
# folder wins (collector/host before collector).
QUOTED = {
    "config": ["config/"],
    "support": ["support/", "config/"],
    "model": ["model/"],
    # Shared text: number formatting, UTF-8 repair, the JSON writer.
    "text": ["text/", "model/"],
    # The analysis layer: facts computed from a Profile. Never an output.
    "analysis": ["analysis/", "text/", "model/"],
    # The outputs: one folder each, rendering analysis results. perfetto/ takes the trace's
    # Python tracks and TraceStats from trace/; html/ shows the table's rows.
    "outputs/table": ["outputs/table/", "analysis/", "text/", "model/"],
    "outputs/trace": ["outputs/trace/", "analysis/", "text/", "model/"],
    "outputs/perfetto": ["outputs/perfetto/", "outputs/trace/", "analysis/", "text/", "model/"],
    "outputs/html": ["outputs/html/", "outputs/table/", "analysis/", "text/", "model/"],
    "outputs/sqlite": ["outputs/sqlite/", "analysis/", "text/", "model/"],
    "launcher": ["launcher/", "outputs/", "analysis/", "text/", "model/", "config/", "support/"],
    "collector/host": ["collector/host/", "model/", "config/", "support/"],
    "collector/cupti": ["collector/cupti/", "collector/host/", "model/", "config/", "support/"],
    # windows/ reaches CUPTI only through the session's entry point and the API-name matcher.
    "collector/windows": ["collector/windows/", "collector/host/", "collector/cupti/gpu_collector.h",
                          "collector/cupti/api_filter.h", "model/", "config/", "support/"],
    # control/ (the --start-paused socket server) asks the window thread for captures through
    # its public header only.
    "collector/control": ["collector/control/", "collector/windows/window_thread.h",
                          "collector/windows/tracker.h", "model/", "config/", "support/"],
    "collector/lifecycle": ["collector/", "model/", "config/", "support/"],
    "inject": ["collector/lifecycle/runtime.h"],
    # The fuzz targets drive the readers of untrusted input: the outputs', the analysis' and the
    # model's, and
    # in the collector only the CUPTI record decoder with the drain's merge, and the NVTX hooks,
    # registry and the profile builder that reads their records back (each header by name).
    "fuzz": ["fuzz/", "outputs/", "analysis/", "text/", "model/", "config/",
             "collector/cupti/activity_decoder.h", "collector/cupti/gpu_drain.h",
             "collector/cupti/gpu_collector.h",
             "collector/host/nvtx_hooks.h", "collector/host/nvtx_registry.h",
             "collector/host/nvtx_records.h", "collector/host/api_records.h",
             "collector/host/thread_buffer.h", "collector/host/host_collection.h",
             "collector/host/profile_builder.h"],
}
# Unit tests next to the code may also use the shared test support; those of the analysis and
# the outputs may check a result where a user sees it, in any output.
TEST_EXTRA = ["tests/support/"]
TEST_EXTRA_LAYER = {"analysis": ["outputs/"], "outputs": ["outputs/"]}

# The size rule: no product source over MAX_LINES lines. Product: every source under these
# folders but tests (*_test.cpp, *_test*.h, tests/ folders, test_*.py); fuzz targets, benchmarks,
# examples and tests/ are not product. The Python hook and the wheel's command count too.
MAX_LINES = 450
# And no product folder holds more than MAX_FLAT_SOURCES product .cpp files flat (subfolders
# count on their own): past that a folder needs subfolders that say what they hold.
MAX_FLAT_SOURCES = 20
PRODUCT_FOLDERS = ("collector", "analysis", "outputs", "text", "launcher", "model", "config",
                   "support", "inject", "python")
PRODUCT_EXT = (".h", ".hpp", ".cpp", ".cc", ".cu", ".py")

# Angle-bracket headers from the CUDA toolkit, and the folders that may include them.
CUDA_HEADER = re.compile(r"^(cupti[^/]*\.h|cuda[^/]*\.h|cuda\.h|nvtx3/.*|nvToolsExt.*|generated_.*|"
                         r"driver_types\.h|vector_types\.h|crt/.*)$")
CUDA_ALLOWED = {
    "collector/cupti": CUDA_HEADER,
    "collector/host": re.compile(r"^nvtx3/.*$"),  # the NVTX hooks' callback tables
    "fuzz": re.compile(r"^nvtx3/.*$"),  # nvtx_registry_fuzz plays the NVTX client's side
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".cu")


def folder_of(rel):
    """The most specific rule folder holding `rel`, or None for folders without rules."""
    best = None
    for folder in QUOTED:
        if rel.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def check_file(root, rel):
    folder = folder_of(rel)
    if folder is None:
        return []
    test = rel.endswith("_test.cpp")
    allowed = QUOTED[folder] + (TEST_EXTRA + TEST_EXTRA_LAYER.get(folder.split("/")[0], [])
                                if test else [])
    errors = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, header = m.groups()
            where = f"{rel}:{number}"
            if kind == '"':
                if not any(header == p or header.startswith(p) for p in allowed):
                    errors.append(f"{where}: {folder}/ may not include \"{header}\" "
                                  f"(allowed: {', '.join(allowed)})")
            elif CUDA_HEADER.match(header):
                rule = CUDA_ALLOWED.get(folder)
                if rule is None or not rule.match(header):
                    errors.append(f"{where}: {folder}/ may not include the CUDA header <{header}>")
    return errors


def is_product(rel):
    parts = rel.split("/")
    name = parts[-1]
    if parts[0] not in PRODUCT_FOLDERS or not name.endswith(PRODUCT_EXT):
        return False
    if "tests" in parts[:-1] or name.startswith("test_"):
        return False
    stem = name.rsplit(".", 1)[0]
    return not (stem.endswith("_test") or "_test_" in stem)


def check_sizes(root):
    errors = []
    for folder in PRODUCT_FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            flat = [n for n in files if n.endswith(".cpp")
                    and is_product(os.path.relpath(os.path.join(dirpath, n), root))]
            if len(flat) > MAX_FLAT_SOURCES:
                rel = os.path.relpath(dirpath, root)
                errors.append(f"{rel}/: {len(flat)} product .cpp files in one folder (at most "
                              f"{MAX_FLAT_SOURCES}): give it subfolders that say what they hold")
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if not is_product(rel):
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    lines = sum(1 for _ in f)
                if lines > MAX_LINES:
                    errors.append(f"{rel}:{lines}: a product file of {lines} lines "
                                  f"(at most {MAX_LINES}): split it by what its parts do")
    return errors


def check_tree(root):
    errors = check_sizes(root)
    for folder in sorted({f.split("/")[0] for f in QUOTED}):
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if name.endswith(SOURCE_EXT):
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    errors += check_file(root, rel)
    return errors


def self_test():
    """Each planted include must be reported; a clean tree must pass."""
    planted = {
        "analysis/tables/bad.cpp": '#include "outputs/table/table.h"\n',
        "outputs/table/bad.cpp": '#include "collector/host/thread_buffer.h"\n',
        "outputs/sqlite/bad.cpp": '#include "outputs/html/html_report.h"\n',
        "text/bad.cpp": '#include "analysis/tables/stats.h"\n',
        "outputs/trace/long.cpp": "// one line too many\n" * (MAX_LINES + 1),
        "launcher/long.h": "// one line too many\n" * (MAX_LINES + 1),
        "python/gprof_run_hook/long.py": "# one line too many\n" * (MAX_LINES + 1),
        **{f"model/heap/f{i}.cpp": "" for i in range(MAX_FLAT_SOURCES + 1)},
        "model/bad.h": "#include <cupti.h>\n",
        "collector/host/bad.cpp": '#include "collector/cupti/session_state.h"\n',
        "collector/windows/bad.cpp": '#include "collector/lifecycle/flush.h"\n',
        "launcher/bad.cpp": "#include <cuda_runtime_api.h>\n",
        "fuzz/bad.cpp": '#include "collector/cupti/session_state.h"\n',
        "fuzz/bad.h": "#include <cupti.h>\n",
    }
    clean = {
        "analysis/tables/good.cpp": ('#include "analysis/attribution/x.h"\n#include "text/format.h"\n'
                                     '#include "model/profile.h"\n#include <vector>\n'),
        "analysis/tables/good_test.cpp": '#include "outputs/table/table.h"\n',
        "outputs/perfetto/good.cpp": '#include "outputs/trace/trace_json.h"\n',
        "outputs/html/good.cpp": '#include "outputs/table/table.h"\n',
        "outputs/trace/fits.cpp": "// just fits\n" * MAX_LINES,
        "launcher/long_test.cpp": "// tests are not product\n" * (MAX_LINES + 100),
        **{f"config/full/f{i}.cpp": "" for i in range(MAX_FLAT_SOURCES)},
        **{f"config/full/f{i}_test.cpp": "" for i in range(5)},
        "collector/cupti/good.cpp": '#include <cupti.h>\n#include "collector/host/api_records.h"\n',
        "collector/windows/good.cpp": '#include "collector/cupti/gpu_collector.h"\n',
        "fuzz/good.cpp": ('#include <nvtx3/nvToolsExt.h>\n'
                          '#include "collector/host/nvtx_registry.h"\n'
                          '#include "collector/cupti/activity_decoder.h"\n'
                          '#include "fuzz/fuzz_check.h"\n'),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**planted, **clean}.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errors = check_tree(root)
    failed = False
    for rel in planted:
        if rel.startswith("model/heap/") and rel != "model/heap/f0.cpp":
            continue  # one breach for the whole folder
        key = "model/heap/:" if rel.startswith("model/heap/") else rel + ":"
        hits = [e for e in errors if e.startswith(key)]
        print(("caught  " if hits else "MISSED  ") + rel + (": " + hits[0] if hits else ""))
        failed |= not hits
    for rel in clean:
        hits = [e for e in errors if e.startswith(rel + ":")]
        if hits:
            print("FALSE ALARM " + hits[0])
            failed = True
    return 1 if failed else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    errors = check_tree(argv[1])
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} breach(es)" if errors else "layering: every include follows the rules")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
