"""Tests of the hook's torch memory part (python/gprof_run_hook/_gprof_run_memory.py,
docs/PYTORCH.md "Memory (--profile-memory)"), as real Python processes with the real torch.

There is no GPU here, so the test programs fake the CUDA caching allocator: right after
`import torch` they replace torch.cuda.memory's _record_memory_history, _set_memory_metadata and
_snapshot with recorders (the hook looks them up at each call), and EVENT() appends a trace entry
as the allocator would, carrying the calling thread's metadata. CUDA initialization is torch's own
torch.cuda._lazy_init() with only its driver call, torch._C._cuda_init, faked: the queued calls
(torch's own and the hook's) run as they do on a GPU, inside _lazy_init with _tls.is_initializing
set, and is_initialized() is True afterwards. What the hook writes at exit is read back from
GPROF_OUTPUT_DIR and compared with the text written out below.

Run with a Python that has torch (ctest python_hook_memory_test uses GPROF_TORCH_PYTHON):
    PYTHON_HOOK_TEST_DIR=python/gprof_run_hook .../torch-venv/bin/python -m unittest -v \
        python/tests/test_memory_hook.py
Under a Python without torch every test is skipped. `python3 test_memory_hook.py
--torch-python=PATH` is the wrapper ctest runs (as test_torch_hook.py's).
Standard library and torch only.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from hook_test_files import DROPPED_ENV as _DROPPED, HAVE_TORCH, HOOK_DIR, torch_test_main


# Put right after `import torch`: the fake allocator (see the module docstring).
FAKE_ALLOCATOR = """\
import json, os, sys, threading
import torch
CALLS = []                  # what the hook asked of the allocator (and the driver)
TRACES = [[], []]           # the fake allocator's device_traces: two devices
_metadata = threading.local()
def _record_memory_history(*args, **kwargs):
    CALLS.append(["record", list(args), kwargs, threading.get_native_id()])
def _set_memory_metadata(text):
    CALLS.append(["metadata", text, threading.get_native_id()])
    _metadata.text = text   # thread-local, as in the allocator
def _snapshot(*args, **kwargs):
    CALLS.append(["snapshot"])
    return {"segments": [], "device_traces": TRACES}
torch.cuda.memory._record_memory_history = _record_memory_history
torch.cuda.memory._set_memory_metadata = _set_memory_metadata
torch.cuda.memory._snapshot = _snapshot
torch._C._cuda_init = lambda: CALLS.append(["cuda_init"])
def EVENT(device, **entry):
    # An allocator event made by this thread: it carries the thread's metadata.
    entry.update(frames=[], user_metadata=getattr(_metadata, "text", ""))
    TRACES[device].append(entry)
def OURS_QUEUED():
    return [fn.__qualname__ for fn, _ in torch.cuda._queued_calls
            if getattr(fn, "__module__", None) == "_gprof_run_memory"]
def COUNTERS():
    m = sys.modules.get("_gprof_run_memory")
    return m and [m.recording_started, m.threads_tagged, m.entries_written]
"""

# Before `import torch`: an atexit handler registered first runs last, after the hook's flush.
AT_EXIT = """\
import atexit, sys
atexit.register(lambda: print("at exit", json.dumps(COUNTERS())))
"""


def program(*parts):
    return "".join(textwrap.dedent(part) for part in parts)


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by this Python (%s); run this file "
                     "with a Python that has torch (GPROF_TORCH_PYTHON)" % sys.executable)
class MemoryHookTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gprof_memory_hook_test.")
        self.tmp = os.path.realpath(self._tmp.name)
        self.out = os.path.join(self.tmp, "out")
        os.mkdir(self.out)

    def tearDown(self):
        self._tmp.cleanup()

    def run_python(self, code, hook=True, memory="1", env=None):
        environment = {k: v for k, v in os.environ.items() if k not in _DROPPED}
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        environment["GPROF_OUTPUT_DIR"] = self.out
        if hook:
            environment["PYTHONPATH"] = HOOK_DIR
        if memory is not None:
            environment["GPROF_TORCH_MEMORY"] = memory
        environment.update(env or {})
        path = os.path.join(self.tmp, "prog.py")
        with open(path, "w") as f:
            f.write(code)
        return subprocess.run([sys.executable, path], env=environment, cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)

    def run_json(self, code, **kwargs):
        """Runs a program that prints one JSON line, then maybe `at exit [...]`."""
        r = self.run_python(code, **kwargs)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines, r.stderr)
        at_exit = None
        if lines[-1].startswith("at exit "):
            at_exit = json.loads(lines.pop()[len("at exit "):])
        return r, json.loads(lines[-1]), at_exit

    def files(self):
        return sorted(os.listdir(self.out))

    def read_only_file(self, pid):
        self.assertEqual(self.files(), ["prog.py.%d.torchmem" % pid])  # renamed into place
        with open(os.path.join(self.out, self.files()[0]), encoding="utf-8", newline="") as f:
            return f.read()

    # ---- recording from CUDA initialization on, threads tagged, the file at exit --------------

    RECORDING = program(AT_EXIT, FAKE_ALLOCATOR, """\
        import time
        out = {"pid": os.getpid(), "main": threading.get_native_id(),
               "queued": OURS_QUEUED(), "before_init": list(CALLS),
               "counters_before": COUNTERS()}
        entered, go = threading.Event(), threading.Event()
        def early():  # running before CUDA initialization: not tagged
            out["early"] = threading.get_native_id()
            entered.set()
            go.wait()
            EVENT(1, action="alloc", addr=0x7f0000600000, size=256, stream=0,
                  time_us=1700000000000009)
        before = threading.Thread(target=early)
        before.start()
        entered.wait()  # its first act (the hook's) is done: start() returns before that
        out["t0"] = time.time_ns()
        torch.cuda._lazy_init()  # what the program's first CUDA tensor does
        out["t1"] = time.time_ns()
        out["initialized"] = torch.cuda.is_initialized()
        out["after_init"] = list(CALLS)
        EVENT(0, action="segment_alloc", addr=0x7f0000000000, size=2097152, stream=0,
              time_us=1700000000000001)
        EVENT(0, action="alloc", addr=0x7f0000000000, size=512, stream=0,
              time_us=1700000000000002)
        def worker():
            out["worker"] = threading.get_native_id()
            EVENT(1, action="alloc", addr=0x7f0000400000, size=1024, stream=93941000000000,
                  time_us=1700000000000003)
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        go.set()
        before.join()
        TRACES[0].append({"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
                          "time_us": 1700000000000004, "frames": [], "user_metadata": ""})
        TRACES[0].append({"action": "alloc", "addr": 0x7f0000000200, "size": 64, "stream": 0,
                          "time_us": 1700000000000005, "frames": [],
                          "user_metadata": "phase:train"})  # the program's own metadata
        EVENT(0, action="free_requested", addr=0x7f0000000000, size=512, stream=0,
              time_us=1700000000000006)
        EVENT(0, action="free_completed", addr=0x7f0000000000, size=512, stream=0,
              time_us=1700000000000007)
        EVENT(1, action="oom", size=8589934592, stream=0, time_us=1700000000000008,
              device_free=1048576)  # an oom has no addr
        TRACES[1].append({"action": "annotate", "addr": 0x7f0000400000, "size": 1024,
                          "stream": 0, "time_us": 1700000000000010, "frames": [],
                          "user_metadata": "label"})
        TRACES[1].append({"action": "segment_free", "addr": 0x7f0000400000, "size": 2097152,
                          "stream": 0, "time_us": 1700000000000011, "frames": []})
        out["calls"] = CALLS
        out["counters"] = COUNTERS()
        print(json.dumps(out))
        """)

    # What the file must hold for RECORDING, %(name)s from the run (written out by hand).
    EXPECTED = (
        "gprof-torchmem\t1\n"
        "pid\t%(pid)d\n"
        "max_entries\t1000000\n"
        "started_ns\t%(started_ns)d\n"
        "e\t0\tsegment_alloc\t139637976727552\t2097152\t0\t1700000000000001\t%(main)d\n"
        "e\t0\talloc\t139637976727552\t512\t0\t1700000000000002\t%(main)d\n"
        "e\t0\talloc\t139637976728064\t64\t0\t1700000000000005\t0\n"
        "e\t0\tfree_requested\t139637976727552\t512\t0\t1700000000000006\t%(main)d\n"
        "e\t0\tfree_completed\t139637976727552\t512\t0\t1700000000000007\t%(main)d\n"
        "e\t1\talloc\t139637980921856\t1024\t93941000000000\t1700000000000003\t%(worker)d\n"
        "e\t1\talloc\t139637983019008\t256\t0\t1700000000000009\t0\n"
        "e\t1\toom\t0\t8589934592\t0\t1700000000000008\t%(main)d\n"
        "e\t1\tsegment_free\t139637980921856\t2097152\t0\t1700000000000011\t0\n"
        "end\t9\n")

    def test_recording_starts_at_cuda_init_tags_threads_and_writes_the_file_at_exit(self):
        for ops in ("1", "0"):  # the thread tag does not depend on the op ranges
            with self.subTest(GPROF_TORCH_OPS=ops):
                for f in self.files():
                    os.remove(os.path.join(self.out, f))
                r, out, at_exit = self.run_json(self.RECORDING, env={"GPROF_TORCH_OPS": ops,
                                                                     "GPROF_LOG_LEVEL": "debug"})
                self.assertEqual(r.stderr, "")  # at debug level a failure of ours says so here
                self.assertEqual(out["queued"], ["_start"])
                self.assertEqual(out["before_init"], [])  # nothing asked before CUDA init
                self.assertEqual(out["counters_before"], [False, 0, 0])
                self.assertTrue(out["initialized"])
                main, worker = out["main"], out["worker"]
                self.assertEqual(out["after_init"], [
                    ["cuda_init"],
                    ["record", [], {"enabled": "all", "context": None, "stacks": "python",
                                    "max_entries": 1000000}, main],
                    ["metadata", "gprof-tid:%d" % main, main]])
                self.assertEqual(out["calls"][3:], [["metadata", "gprof-tid:%d" % worker,
                                                     worker]])
                self.assertNotEqual(out["early"], main)
                self.assertEqual(out["counters"], [True, 2, 0])
                self.assertEqual(at_exit, [True, 2, 9])

                text = self.read_only_file(out["pid"])
                started = int(text.split("\n")[3].split("\t")[1])
                self.assertTrue(out["t0"] <= started <= out["t1"], (out, started))
                self.assertEqual(text, self.EXPECTED % dict(pid=out["pid"], started_ns=started,
                                                            main=main, worker=worker))

    def test_off_unless_GPROF_TORCH_MEMORY_is_1(self):
        code = program(AT_EXIT, FAKE_ALLOCATOR, """\
            out = {"loaded": "_gprof_run_memory" in sys.modules, "queued": OURS_QUEUED()}
            torch.cuda._lazy_init()
            EVENT(0, action="alloc", addr=4096, size=512, stream=0, time_us=1)
            t = threading.Thread(target=lambda: EVENT(0, action="alloc", addr=8192, size=512,
                                                      stream=0, time_us=2))
            t.start()
            t.join()
            out["calls"] = CALLS
            print(json.dumps(out))
            """)
        for memory in (None, "0", "", "yes"):
            with self.subTest(GPROF_TORCH_MEMORY=memory):
                r, out, at_exit = self.run_json(code, memory=memory)
                self.assertEqual(r.stderr, "")
                self.assertEqual(out, {"loaded": False, "queued": [], "calls": [["cuda_init"]]})
                self.assertIsNone(at_exit)  # the module was never loaded
                self.assertEqual(self.files(), [])

    def test_no_cuda_initialization_of_its_own(self):
        code = program(AT_EXIT, FAKE_ALLOCATOR, """\
            model = torch.nn.Linear(4, 1)
            model(torch.ones(2, 4)).sum().backward()
            t = threading.Thread(target=lambda: torch.ones(3).sum())
            t.start()
            t.join()
            print(json.dumps({"calls": CALLS, "initialized": torch.cuda.is_initialized(),
                              "queued": OURS_QUEUED()}))
            """)
        r, out, at_exit = self.run_json(code)
        self.assertEqual(r.stderr, "")
        self.assertEqual(out, {"calls": [], "initialized": False, "queued": ["_start"]})
        self.assertEqual(at_exit, [False, 0, 0])
        self.assertEqual(self.files(), [])  # CUDA never initialized: nothing recorded

    # ---- failures, fork, and what the program sees ----------------------------------------------

    RAISING = program(FAKE_ALLOCATOR, """\
        def _refuse(*args, **kwargs):
            raise RuntimeError("no allocator here")
        torch.cuda.memory._record_memory_history = _refuse
        torch.cuda._lazy_init()
        print("initialized", torch.cuda.is_initialized())
        t = threading.Thread(target=lambda: print("thread ran"))
        t.start()
        t.join()
        print("calls", CALLS)
        sys.exit(3)
        """)

    def test_a_refused_start_leaves_the_program_as_without_the_hook(self):
        without = self.run_python(self.RAISING, hook=False)
        with_hook = self.run_python(self.RAISING)
        self.assertEqual(without.returncode, 3, without.stderr)
        self.assertEqual(without.stdout,
                         "initialized True\nthread ran\ncalls [['cuda_init']]\n")
        self.assertEqual((with_hook.returncode, with_hook.stdout, with_hook.stderr),
                         (without.returncode, without.stdout, without.stderr))
        self.assertEqual(self.files(), [])
        debug = self.run_python(self.RAISING, env={"GPROF_LOG_LEVEL": "debug"})
        self.assertEqual((debug.returncode, debug.stdout), (3, without.stdout))
        self.assertEqual(debug.stderr, "gprof-run: python hook: starting torch's memory recording "
                         "failed (RuntimeError: no allocator here); the program continues "
                         "without it\n")
        self.assertEqual(self.files(), [])

    def test_fork_children_record_nothing_and_write_nothing(self):
        code = program(FAKE_ALLOCATOR, """\
            def child(init):
                if init:
                    torch.cuda._lazy_init()  # the child's own CUDA init: the parent's had not run
                EVENT(0, action="alloc", addr=4096, size=512, stream=0, time_us=5)
                t = threading.Thread(target=lambda: None)
                t.start()
                t.join()
                print("child", json.dumps(CALLS), flush=True)
                sys.exit(0)  # runs atexit in the child: it must write nothing
            pid = os.fork()  # before CUDA initialization
            if pid == 0:
                child(True)
            os.waitpid(pid, 0)
            torch.cuda._lazy_init()
            EVENT(0, action="alloc", addr=8192, size=512, stream=0, time_us=6)
            pid = os.fork()  # after: recording is on in the parent
            if pid == 0:
                CALLS.clear()
                child(False)
            os.waitpid(pid, 0)
            print("parent", os.getpid(), os.listdir(os.environ["GPROF_OUTPUT_DIR"]))
            """)
        r = self.run_python(code)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[:2], ['child [["cuda_init"]]', "child []"])
        parent = int(lines[2].split()[1])
        self.assertEqual(lines[2], "parent %d []" % parent)  # nothing from the children
        text = self.read_only_file(parent).split("\n")
        self.assertEqual(text[3].split("\t")[0], "started_ns")
        del text[3]
        # The main thread's native id is the pid.
        self.assertEqual(text, ["gprof-torchmem\t1", "pid\t%d" % parent, "max_entries\t1000000",
                                "e\t0\talloc\t8192\t512\t0\t6\t%d" % parent, "end\t1", ""])

    TRAINING = program(FAKE_ALLOCATOR, """\
        import warnings
        torch.manual_seed(0)
        torch.cuda._lazy_init()
        model = torch.nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            loss = model(torch.ones(4, 8)).pow(2).mean()
            loss.backward()
            opt.step()
            EVENT(0, action="alloc", addr=4096 * (step + 1), size=512, stream=0, time_us=step)
            print("step %d loss %.6f" % (step, loss.item()))
        t = threading.Thread(target=lambda: print("thread", float(model(torch.ones(1, 8)))))
        t.start()
        t.join()
        warnings.warn("the program's own warning")
        sys.stderr.write("the program's own stderr\\n")
        sys.exit(5)
        """)

    def test_the_programs_output_and_exit_status_are_unchanged(self):
        without = self.run_python(self.TRAINING, hook=False)
        with_hook = self.run_python(self.TRAINING)
        self.assertEqual(without.returncode, 5, without.stderr)
        self.assertIn("step 2 loss", without.stdout)
        self.assertIn("the program's own stderr", without.stderr)
        self.assertEqual((with_hook.returncode, with_hook.stdout, with_hook.stderr),
                         (without.returncode, without.stdout, without.stderr))
        self.assertEqual(len(self.files()), 1)
        with open(os.path.join(self.out, self.files()[0]), encoding="utf-8") as f:
            self.assertTrue(f.read().endswith("\nend\t3\n"))


if __name__ == "__main__":
    torch_test_main(__file__)
