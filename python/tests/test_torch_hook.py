"""Tests of what gprof-run's Python hook does to a program that imports the real torch
(python/gprof_run_hook/_gprof_run_torch.py, docs/PYTORCH.md), as real Python processes.

Each test runs a small torch program with the hook folder first on PYTHONPATH (sometimes also
without it, to compare what a user would see) and reads what the program printed: torch's own
answers (torch.autograd._profiler_enabled(), a torch.profiler table, torch.cuda.is_initialized())
and the hook's counters (module _gprof_run_torch). The programs replace torch.cuda.nvtx's
range_start/range_end/mark with recorders after `import torch`, so the NVTX strings the hook emits
are seen without the collector (the hook looks those functions up at each call). CPU only: no GPU
is needed, and none is touched.

Run with a Python that has torch (ctest python_hook_torch_test uses GPROF_TORCH_PYTHON):
    PYTHON_HOOK_TEST_DIR=python/gprof_run_hook .../torch-venv/bin/python -m unittest -v \
        python/tests/test_torch_hook.py
Under a Python without torch every test is skipped (so `unittest discover` with the system Python
passes). `python3 test_torch_hook.py --torch-python=PATH` is the wrapper ctest runs: it runs this
file with PATH, or says SKIPPED and exits 77 when PATH is empty or missing.
Standard library and torch only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

from hook_test_files import (DROPPED_ENV as _DROPPED, HAVE_TORCH, HOOK_DIR,
                             write_file, torch_test_main)


# Put after `import torch` in a test program: records the NVTX calls the hook makes from then on
# (NVTX_CALLS), and STATE() reads the hook's counters.
NVTX_RECORDER = """\
import json, sys, threading
import torch
HOOK = sys.modules.get("_gprof_run_torch")
NVTX_CALLS = []
_next_id = [100]
def _range_start(name):
    _next_id[0] += 1
    NVTX_CALLS.append(["start", name, _next_id[0]])
    return _next_id[0]
torch.cuda.nvtx.range_start = _range_start
torch.cuda.nvtx.range_end = lambda rid: NVTX_CALLS.append(["end", rid])
torch.cuda.nvtx.mark = lambda msg: NVTX_CALLS.append(["mark", msg])
def STATE():
    names = ("ops_enabled_threads", "torch_profiler_spans", "optimizer_steps",
             "own_steps_detected", "step_ranges")
    return {n: getattr(HOOK, n, None) for n in names}  # all None without the hook
def OURS_ON():
    if HOOK is None:
        return None
    ops = getattr(HOOK._local, "ops", None)
    return bool(ops is not None and ops.on)
"""

TRAIN_STEP = """\
def make_model():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    return model, torch.optim.AdamW(model.parameters(), lr=0.01)
def train(model, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        model(torch.ones(4, 8)).sum().backward()
        opt.step()
"""


def program(*parts):
    """A test program from pieces, each indented as it sits in this file."""
    return "".join(textwrap.dedent(part) for part in parts)


def calls_column(table, name):
    """The '# of Calls' cell of row `name` in a key_averages().table()."""
    lines = table.splitlines()
    header = next(line for line in lines if "# of Calls" in line)
    cells = re.split(r"\s{2,}", header.strip())
    index = cells.index("# of Calls")
    for line in lines:
        row = re.split(r"\s{2,}", line.strip())
        if row and row[0] == name:
            return int(row[index])
    return None


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by this Python (%s); run this file "
                     "with a Python that has torch (GPROF_TORCH_PYTHON)" % sys.executable)
class TorchHookTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gprof_torch_hook_test.")
        self.tmp = os.path.realpath(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def run_python(self, code, hook=True, env=None, args=(), path=()):
        environment = {k: v for k, v in os.environ.items() if k not in _DROPPED}
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the hook folder
        entries = ([HOOK_DIR] if hook else []) + list(path)
        if entries:
            environment["PYTHONPATH"] = os.pathsep.join(entries)
        environment.update(env or {})
        # A file, not -c: torch.jit.script needs the source, and tracebacks name the same file
        # with and without the hook.
        program = self.write_file("prog.py", code)
        return subprocess.run([sys.executable, program] + list(args),
                              env=environment, cwd=self.tmp, capture_output=True, timeout=120)

    def write_file(self, relpath, text):
        return write_file(self.tmp, relpath, text)

    def run_json(self, code, **kwargs):
        """Runs a program whose last stdout line is JSON; returns (result, that JSON)."""
        r = self.run_python(code, **kwargs)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        lines = r.stdout.decode().strip().splitlines()
        self.assertTrue(lines, r.stderr.decode())
        return r, json.loads(lines[-1])

    def assertSameForTheProgram(self, without, with_hook):
        self.assertEqual(with_hook.stdout.decode(), without.stdout.decode())
        self.assertEqual(with_hook.stderr.decode(), without.stderr.decode())
        self.assertEqual(with_hook.returncode, without.returncode)

    def assertSameStderrAsWithout(self, code, with_hook):
        """Runs `code` without the hook: the same lines on stderr as with it. Kineto logs there
        when the program runs torch.profiler (on this GPU-less machine "gpuGetDeviceCount failed",
        profiler_start/stop), with time, pid and tid in front: those are left out."""
        without = self.run_python(code, hook=False)
        self.assertEqual(without.returncode, 0, without.stderr.decode())
        strip = lambda r: re.sub(r"(?m)^(\w+):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ ", r"\1: ",
                                 r.stderr.decode())
        self.assertEqual(strip(with_hook), strip(without))

    # ---- 1. torch's per-op ranges on every thread --------------------------------------------------

    def test_ops_on_in_the_importing_thread_new_threads_pool_workers_and_backward(self):
        code = program(NVTX_RECORDER, """\
            from concurrent.futures import ThreadPoolExecutor
            enabled = torch.autograd._profiler_enabled
            out = {"main": enabled()}
            seen = []
            t = threading.Thread(target=lambda: seen.append(enabled())); t.start(); t.join()
            out["thread"] = seen[0]
            with ThreadPoolExecutor(2) as pool:
                out["pool"] = list(pool.map(lambda _: enabled(), range(4)))
            # Backward: the engine's threads (on a GPU) inherit the caller's profiler state; a
            # gradient hook runs where backward's ops run.
            x = torch.ones(3, 3, requires_grad=True)
            backward = []
            x.register_hook(lambda g: backward.append(enabled()))
            (x * 2).sum().backward()
            def backward_in_thread():
                y = torch.ones(2, requires_grad=True)
                y.register_hook(lambda g: backward.append(enabled()))
                (y * 3).sum().backward()
            t = threading.Thread(target=backward_in_thread); t.start(); t.join()
            out["backward"] = backward
            out["state"] = STATE()
            out["cuda_initialized"] = torch.cuda.is_initialized()
            print(json.dumps(out))
            """)
        r, out = self.run_json(code, env={"GPROF_LOG_LEVEL": "debug"})
        self.assertEqual(r.stderr, b"")  # at debug level a failure of ours would say so here
        self.assertTrue(out["main"])
        self.assertTrue(out["thread"])
        self.assertEqual(out["pool"], [True] * 4)
        self.assertEqual(out["backward"], [True, True])
        # main, the thread, up to two pool workers, the backward thread
        self.assertIn(out["state"]["ops_enabled_threads"], (4, 5))
        self.assertFalse(out["cuda_initialized"])

    def test_ops_stay_off_with_GPROF_TORCH_OPS_0(self):
        code = program(NVTX_RECORDER, """\
            from concurrent.futures import ThreadPoolExecutor
            enabled = torch.autograd._profiler_enabled
            seen = []
            t = threading.Thread(target=lambda: seen.append(enabled())); t.start(); t.join()
            with ThreadPoolExecutor(2) as pool:
                seen += pool.map(lambda _: enabled(), range(2))
            profile_hook = threading.getprofile() is not None
            torch.nn.Linear(2, 1)(torch.ones(1, 2))  # the first forward: step 0 starts
            print(json.dumps({"main": enabled(), "threads": seen, "state": STATE(),
                              "profile_hook": profile_hook}))
            """)
        r, out = self.run_json(code, env={"GPROF_TORCH_OPS": "0"})
        self.assertEqual(r.stderr, b"")
        self.assertFalse(out["main"])
        self.assertEqual(out["threads"], [False] * 3)
        self.assertEqual(out["state"]["ops_enabled_threads"], 0)
        self.assertFalse(out["profile_hook"])
        self.assertEqual(out["state"]["step_ranges"], 1)  # steps do not depend on op ranges

    def test_the_programs_own_threading_profile_function_still_sees_new_threads(self):
        code = """\
            import json, threading
            events = []
            def profile(frame, event, arg):
                if threading.current_thread().name == "worker" and len(events) < 6:
                    events.append([event, frame.f_code.co_name])
            threading.setprofile(profile)
            import torch
            ops = []
            def work():
                ops.append(torch.autograd._profiler_enabled())
                torch.ones(2).sum()
            t = threading.Thread(target=work, name="worker"); t.start(); t.join()
            print(json.dumps({"events": events, "ops": ops,
                              "profile": threading.getprofile() is profile}))
            """
        r_without, without = self.run_json(code, hook=False)
        r_with, with_hook = self.run_json(code)
        self.assertEqual(r_with.stderr, r_without.stderr)
        self.assertTrue(without["events"])
        self.assertEqual(with_hook["events"], without["events"])  # the same events, first one too
        self.assertEqual(without["ops"], [False])
        self.assertEqual(with_hook["ops"], [True])
        self.assertTrue(without["profile"])

    # ---- 2. the program's own torch profiler --------------------------------------------------------

    def test_torch_profiler_emit_nvtx_and_profile_step_of_the_program_work_and_ops_come_back(self):
        code = program(NVTX_RECORDER, TRAIN_STEP, """\
            from torch.profiler import profile, ProfilerActivity
            enabled = torch.autograd._profiler_enabled
            out = {"before": [enabled(), OURS_ON()]}
            model, opt = make_model()
            with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
                for _ in range(3):
                    torch.mm(torch.ones(4, 4), torch.ones(4, 4))
                out["inside"] = [enabled(), OURS_ON()]
            table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=50)
            print(table)
            out["after"] = [enabled(), OURS_ON()]
            train(model, opt, 2)  # a profiler without a schedule has no steps: ours go on
            out["steps_after_profile"] = STATE()["step_ranges"]

            # emit_nvtx synchronizes CUDA on entry and exit; on this GPU-less machine that raises,
            # so the program stands in a no-op (the hook itself never synchronizes).
            if not torch.cuda.is_available():
                torch.cuda.synchronize = lambda device=None: None
            with torch.autograd.profiler.emit_nvtx():
                torch.mm(torch.ones(2, 2), torch.ones(2, 2))
                out["inside_emit_nvtx"] = [enabled(), OURS_ON()]
            out["after_emit_nvtx"] = [enabled(), OURS_ON()]

            with profile(activities=[ProfilerActivity.CPU]) as prof2:
                prof2.step()  # a program that steps its profiler has steps of its own
            train(model, opt, 2)
            out["state"] = STATE()
            out["nvtx"] = NVTX_CALLS
            print(json.dumps(out))
            """)
        r, out = self.run_json(code)
        self.assertSameStderrAsWithout(code, r)
        self.assertEqual(calls_column(r.stdout.decode(), "aten::mm"), 3)
        self.assertEqual(out["before"], [True, True])
        self.assertEqual(out["inside"], [True, False])  # the program's profiler, not ours
        self.assertEqual(out["after"], [True, True])
        self.assertEqual(out["inside_emit_nvtx"], [True, False])
        self.assertEqual(out["after_emit_nvtx"], [True, True])
        self.assertEqual(out["steps_after_profile"], 3)  # ProfilerStep#0, #1, #2
        state = out["state"]
        self.assertEqual(state["torch_profiler_spans"], 3)
        self.assertTrue(state["own_steps_detected"])
        self.assertEqual(state["optimizer_steps"], 4)
        self.assertEqual(state["step_ranges"], 3)  # none after the program's own steps
        marks = [c[1] for c in out["nvtx"] if c[0] == "mark"]
        self.assertEqual(marks, ["gprof-run: torch.profiler started",
                                 "gprof-run: torch.profiler stopped"] * 2
                         + ["gprof-run: torch.profiler started",
                            "gprof-run: program has its own steps",
                            "gprof-run: torch.profiler stopped"])
        starts = [c for c in out["nvtx"] if c[0] == "start"]
        ends = [c[1] for c in out["nvtx"] if c[0] == "end"]
        # Step 0 starts at the first forward, after the program's first profile.
        self.assertEqual([c[1] for c in starts], ["ProfilerStep#0", "ProfilerStep#1",
                                                  "ProfilerStep#2"])
        self.assertEqual(ends[-1], starts[-1][2])  # the open step ends when own steps are seen

    def test_a_schedule_driven_torch_profiler_keeps_its_steps_and_ours_stop(self):
        code = program(NVTX_RECORDER, TRAIN_STEP, """\
            from torch.profiler import profile, schedule, ProfilerActivity
            model, opt = make_model()
            train(model, opt, 1)
            out = {"before": STATE()}
            traces = []
            with profile(activities=[ProfilerActivity.CPU],
                         schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                         on_trace_ready=lambda p: traces.append(p.key_averages().table())) as prof:
                for _ in range(6):
                    train(model, opt, 1)
                    torch.cumsum(torch.ones(4), 0)
                    prof.step()
            print(traces[0])
            out["ours_on_after"] = OURS_ON()
            out["state"] = STATE()
            out["nvtx"] = NVTX_CALLS
            print(json.dumps(out))
            """)
        r, out = self.run_json(code)
        self.assertSameStderrAsWithout(code, r)
        table = r.stdout.decode()
        self.assertEqual(calls_column(table, "aten::cumsum"), 2)  # the two active steps
        self.assertEqual(calls_column(table, "ProfilerStep*"), 2)
        self.assertEqual(out["before"]["step_ranges"], 2)
        state = out["state"]
        self.assertTrue(state["own_steps_detected"])
        self.assertEqual(state["optimizer_steps"], 7)
        self.assertEqual(state["step_ranges"], 2)  # no ProfilerStep of ours after that
        self.assertEqual(state["torch_profiler_spans"], 1)
        self.assertTrue(out["ours_on_after"])
        marks = [c[1] for c in out["nvtx"] if c[0] == "mark"]
        self.assertEqual(marks.count("gprof-run: program has its own steps"), 1)
        self.assertEqual([m for m in marks if "torch.profiler" in m],
                         ["gprof-run: torch.profiler started", "gprof-run: torch.profiler stopped"])

    # ---- 3. optimizer steps -----------------------------------------------------------------------------

    def test_optimizer_steps_become_ProfilerStep_ranges_until_the_program_names_its_own(self):
        code = program(NVTX_RECORDER, TRAIN_STEP, """\
            model, opt = make_model()
            at_import = STATE()
            train(model, opt, 5)
            after_five = STATE()
            # GAN-style: two optimizers in one iteration, each step() counts.
            other = torch.nn.Linear(8, 1)
            opt2 = torch.optim.SGD(other.parameters(), lr=0.1)
            other(torch.ones(2, 8)).sum().backward()
            opt.step(); opt2.step()
            after_two = STATE()
            with torch.autograd.profiler.record_function("ProfilerStep#40"):
                pass
            train(model, opt, 2)
            print(json.dumps({"at_import": at_import, "after_five": after_five,
                              "after_two": after_two, "state": STATE(), "nvtx": NVTX_CALLS}))
            """)
        r, out = self.run_json(code)
        self.assertEqual(r.stderr, b"")
        self.assertEqual(out["at_import"]["step_ranges"], 0)  # no forward yet: no step
        self.assertEqual(out["after_five"]["optimizer_steps"], 5)
        self.assertEqual(out["after_five"]["step_ranges"], 6)  # #0 from the first forward, #1-#5
        self.assertEqual(out["after_two"]["optimizer_steps"], 7)
        state = out["state"]
        self.assertTrue(state["own_steps_detected"])
        self.assertEqual(state["optimizer_steps"], 9)
        self.assertEqual(state["step_ranges"], 8)
        calls = out["nvtx"]
        # Each step ends the open range, then starts the next one; own steps end the last.
        expected = [["start", "ProfilerStep#%d" % n, 101 + n] for n in range(0, 8)]
        self.assertEqual([c for c in calls if c[0] == "start"], expected)
        ends = [c[1] for c in calls if c[0] == "end"]
        self.assertEqual(ends, [101, 102, 103, 104, 105, 106, 107, 108])
        self.assertEqual(calls[-1], ["mark", "gprof-run: program has its own steps"])
        self.assertEqual([c[0] for c in calls[-2:]], ["end", "mark"])

        off = self.run_json(code, env={"GPROF_TORCH_STEPS": "off"})[1]
        self.assertEqual(off["state"]["step_ranges"], 0)
        self.assertEqual(off["state"]["optimizer_steps"], 0)  # no hook on the optimizers at all
        self.assertFalse(off["state"]["own_steps_detected"])
        self.assertEqual(off["nvtx"], [])

    def test_step_0_starts_at_the_first_forward_and_the_last_step_ends_at_exit(self):
        # The start-up (imports, a 0.2 s pause standing in for data loading, the model's
        # construction and its parameter-init ops) is in no step: ProfilerStep#0 starts when the
        # first forward begins. At exit the last step, still open, ends (an atexit handler
        # registered before `import torch` runs after the hook's and prints what it saw).
        code = program("""\
            import atexit, json, time
            atexit.register(lambda: print(json.dumps(NVTX_CALLS)))
            """, NVTX_RECORDER, TRAIN_STEP, """\
            from torch.nn.modules import module as nn_module
            time.sleep(0.2)
            model, opt = make_model()
            torch.nn.init.normal_(model.weight)
            NVTX_CALLS.append(["program", "first forward next", len(nn_module._global_forward_pre_hooks)])
            train(model, opt, 3)
            NVTX_CALLS.append(["program", "forward hooks left", len(nn_module._global_forward_pre_hooks)])
            print(json.dumps(STATE()))
            """)
        r = self.run_python(code)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stderr, b"")
        state, calls = [json.loads(l) for l in r.stdout.decode().splitlines()[-2:]]
        self.assertEqual(state["step_ranges"], 4)  # #0 from the first forward, #1-#3
        self.assertEqual(calls, [
            ["program", "first forward next", 1],  # the hook's forward pre-hook, waiting
            ["start", "ProfilerStep#0", 101],      # the first forward of the loop
            ["end", 101], ["start", "ProfilerStep#1", 102],
            ["end", 102], ["start", "ProfilerStep#2", 103],
            ["end", 103], ["start", "ProfilerStep#3", 104],
            ["program", "forward hooks left", 0],  # taken off after the first forward
            ["end", 104],                          # at exit: no range left open
        ])

    def test_a_first_forward_inside_torch_compile_breaks_no_graph_and_compiles_nothing_again(self):
        # The step-0 hook is a global module hook: dynamo traces it into a compiled function that
        # calls a module first. The program's graphs must be the ones it gets without the hook:
        # no graph break, and no second compile after a later eager forward.
        code = """\
            import json
            import torch
            import torch._dynamo.utils as dynamo_utils
            m = torch.nn.Linear(4, 4)
            g = torch.compile(lambda x: m(x).sum())
            x = torch.randn(2, 4)
            for _ in range(3):
                g(x)
            m(x)  # an eager forward afterwards
            for _ in range(3):
                g(x)
            print(json.dumps({"graph_breaks": sum(dynamo_utils.counters["graph_break"].values()),
                              "graphs": dynamo_utils.counters["stats"]["unique_graphs"]}))
            """
        without = self.run_json(code, hook=False)[1]
        self.assertEqual(without, {"graph_breaks": 0, "graphs": 1})
        self.assertEqual(self.run_json(code)[1], without)

    def test_no_forward_before_the_first_optimizer_step_makes_step_0_empty(self):
        # A model without nn.Module (plain tensors): there is no forward to start step 0 at, so
        # the first iteration is part of the start-up and step 0 is empty, made at the first
        # optimizer.step() just before #1: step N stays the N-th step boundary, as schedule
        # windows count them, so a window named stepsA-B holds ProfilerStep#A..#B.
        code = program(NVTX_RECORDER, """\
            w = torch.zeros(4, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            for _ in range(2):
                opt.zero_grad(); (w * 2).sum().backward(); opt.step()
            print(json.dumps(NVTX_CALLS))
            """)
        _, calls = self.run_json(code)
        self.assertEqual(calls, [["start", "ProfilerStep#0", 101], ["end", 101],
                                 ["start", "ProfilerStep#1", 102],
                                 ["end", 102], ["start", "ProfilerStep#2", 103]])

    # ---- rules: no CUDA, nothing the program would notice ----------------------------------------------

    # The environment's own sitecustomize (the hook runs it at start-up, after installing itself):
    # from the moment torch.cuda is loaded, inside torch's import and so before the hook's torch
    # part runs, it counts calls of the Python functions that initialize CUDA or ask the driver for
    # devices (on this GPU-less machine an attempt would fail and leave is_initialized() False).
    CUDA_WATCH = """\
        import sys
        CALLS = []
        WATCHED = ("_lazy_init", "init", "is_available", "device_count", "synchronize",
                   "current_device", "set_device")
        class _WatchTorchCuda:
            def find_spec(self, name, path=None, target=None):
                if name != "torch.cuda":
                    return None
                for finder in sys.meta_path:
                    if finder is self or not hasattr(finder, "find_spec"):
                        continue
                    spec = finder.find_spec(name, path, target)
                    if spec is not None:
                        break
                else:
                    return None
                real = spec.loader
                class Loader:
                    def create_module(self, spec):
                        return real.create_module(spec)
                    def exec_module(self, module):
                        module.__spec__.loader = module.__loader__ = real
                        real.exec_module(module)
                        for fn in WATCHED:
                            def counted(*a, _real=getattr(module, fn), _name=fn, **k):
                                CALLS.append(_name)
                                return _real(*a, **k)
                            setattr(module, fn, counted)
                spec.loader = Loader()
                return spec
        sys.meta_path.insert(0, _WatchTorchCuda())
        """

    def test_no_cuda_initialization_with_CUDA_VISIBLE_DEVICES_set_after_import(self):
        self.write_file("site_dir/sitecustomize.py", self.CUDA_WATCH)
        code = """\
            import atexit, os, sys, threading
            atexit.register(lambda: print("at exit, cuda initialized:",
                                          sys.modules["torch"].cuda.is_initialized()))
            import torch
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            model = torch.nn.Linear(4, 1)
            opt = torch.optim.AdamW(model.parameters())
            for _ in range(2):
                opt.zero_grad(); model(torch.ones(2, 4)).sum().backward(); opt.step()
            t = threading.Thread(target=lambda: torch.mm(torch.ones(2, 2), torch.ones(2, 2)))
            t.start(); t.join()
            with torch.autograd.profiler.record_function("ProfilerStep#1"):
                pass
            print("cuda calls:", sys.modules["sitecustomize"].CALLS)
            print("cuda initialized:", torch.cuda.is_initialized())
            print("CUDA_VISIBLE_DEVICES", os.environ["CUDA_VISIBLE_DEVICES"])
            """
        site_dir = os.path.join(self.tmp, "site_dir")
        without = self.run_python(code, hook=False, path=[site_dir])
        with_hook = self.run_python(code, path=[site_dir])
        self.assertEqual(without.returncode, 0, without.stderr.decode())
        self.assertSameForTheProgram(without, with_hook)  # the program's own calls, no more
        out = with_hook.stdout.decode()
        self.assertIn("cuda calls: [", out)
        for init in ("_lazy_init", "'init'", "synchronize", "current_device", "set_device"):
            self.assertNotIn(init, out)
        self.assertTrue(out.endswith("cuda initialized: False\nCUDA_VISIBLE_DEVICES 0\n"
                                     "at exit, cuda initialized: False\n"), out)

    TRAINING = """\
        import sys, threading, traceback
        from concurrent.futures import ThreadPoolExecutor
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        opt = torch.optim.AdamW(model.parameters(), lr=0.01)
        x = torch.randn(64, 8)
        y = x.sum(1, keepdim=True)

        @torch.jit.script
        def halve(t):
            with torch.autograd.profiler.record_function("halve"):
                return t * 0.5

        def main():
            for step in range(6):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(halve(model(x)) * 2, y)
                loss.backward()
                opt.step()
                print("step %d loss %.6f" % (step, loss.item()))
                if sys.argv[1] == "raise" and step == 3:
                    raise ValueError("loss went bad at step 3")
            with ThreadPoolExecutor(2) as pool:
                print(sum(pool.map(lambda i: float(torch.ones(4).sum()) * i, range(4))))
            t = threading.Thread(target=lambda: print("thread", float(model(x).mean())))
            t.start()
            t.join()

        try:
            main()
        except ValueError:
            traceback.print_exc()
            sys.exit(3)
        """

    def test_a_training_loop_prints_and_exits_as_without_the_hook(self):
        for mode, status in (("ok", 0), ("raise", 3)):
            with self.subTest(mode=mode):
                without = self.run_python(self.TRAINING, hook=False, args=[mode])
                with_hook = self.run_python(self.TRAINING, args=[mode])
                self.assertEqual(without.returncode, status, without.stderr.decode())
                self.assertSameForTheProgram(without, with_hook)
                self.assertIn("step 3 loss", with_hook.stdout.decode())


if __name__ == "__main__":
    torch_test_main(__file__)
