"""Tests of the out-of-process Python sampler (python/gprof_run_hook/_gprof_run_remote_sampler.py
and _gprof_run_remote_reader.py), the default where it can read the program (CPython 3.11 on
Linux), as real Python processes with the hook folder first on PYTHONPATH (no gprof-run). What a
user would check: the program's output and exit status are the same as without sampling, the
samples name the functions the program ran on the threads that ran them, at times inside the run,
and sampling goes on while the program holds the GIL (the in-process sampler cannot).

Expected values come from the programs below: each prints its threads' Linux tids and its start
and end times, and spends its time in functions with distinctive names.
"""
import os
import struct
import sys
import unittest

from test_sampler import HOOK_DIR, SamplerCase

sys.path.insert(0, HOOK_DIR)
import _gprof_run_remote_reader as reader  # noqa: E402
sys.path.remove(HOOK_DIR)

ON_311 = sys.version_info[:2] == (3, 11)


@unittest.skipUnless(ON_311, "the out-of-process sampler reads CPython 3.11 only")
class RemoteSamplerTest(SamplerCase):
    def test_names_the_spinning_function_on_its_thread_at_times_inside_the_run(self):
        path = self.program("""\
            import threading, time
            def distinctive_spin_in_worker():
                end = time.monotonic() + 0.6
                while time.monotonic() < end:
                    pass
            def main_waits_for_worker(t):
                t.join()
            start = time.time_ns()
            t = threading.Thread(target=distinctive_spin_in_worker, name="spinner")
            t.start()
            main_waits_for_worker(t)
            print(threading.get_native_id(), t.native_id, start, time.time_ns())
            """)
        r = self.run_program(path, 200)  # prints times and tids: not compared with a plain run
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        main_tid, worker_tid, start, end = (int(x) for x in r.stdout.split())
        header, threads, frames, stacks, samples = self.only_samples()
        self.assertEqual(header["sampler"], "out-of-process")
        tids = {t[0]: t[2] for t in threads}
        self.assertEqual(tids.get(main_tid), "MainThread")
        self.assertIn(worker_tid, tids)  # ended before exit: its name is not known then
        by_tid = {}
        for ts, thread, stack in samples:
            by_tid.setdefault(threads[thread][0], []).append((ts, [frames[f] for f in stacks[stack]]))
        worker = by_tid[worker_tid]
        # 0.6 s at 200 Hz is 120 ticks; at least 10: on a loaded machine (20 runnable tasks on
        # 2 cores) the sampler process got 24.
        self.assertGreaterEqual(len(worker), 10)
        spinning = [s for s in worker if s[1][-1][1] == "distinctive_spin_in_worker"]
        self.assertGreaterEqual(len(spinning), len(worker) * 9 // 10)
        # Its frames: this file, its first line (2), a line of its loop (3 to 5).
        file, _, first, line = spinning[0][1][-1]
        self.assertEqual((file, first), (path, 2))
        self.assertIn(line, (3, 4, 5))
        self.assertEqual(spinning[0][1][0][1], "_bootstrap")  # threading's, root first
        # The main thread waits in t.join(), called from main_waits_for_worker.
        waiting = [s for s in by_tid[main_tid]
                   if "main_waits_for_worker" in [f[1] for f in s[1]]]
        self.assertGreaterEqual(len(waiting), 10)
        # Every sample inside the run: after the sampler started (before the program's first
        # line) and before the program's last print.
        for ts, _ in worker + by_tid[main_tid]:
            self.assertGreaterEqual(ts, header["start_ns"])
            self.assertLessEqual(ts, header["end_ns"])
        inside = [ts for ts, _ in worker if start <= ts <= end]
        self.assertEqual(len(inside), len(worker))

    def test_samples_on_while_the_program_holds_the_gil_in_c(self):
        # ctypes.PyDLL keeps the GIL during libc's sleep(1): the in-process sampler misses
        # about 1000 ticks there (test_sampler.py); read from outside, the main thread is seen
        # waiting on that line for the whole second.
        path = self.program("""\
            import ctypes, sys, time
            libc = ctypes.PyDLL(None)
            t0 = time.time_ns()
            libc.sleep(1)
            print(t0, time.time_ns())
            sys.exit(3)
            """)
        r = self.run_program(path, 200, timeout=30)
        self.assertEqual((r.returncode, r.stderr), (3, ""))
        t0, t1 = (int(x) for x in r.stdout.split())
        header, threads, frames, stacks, samples = self.only_samples()
        self.assertEqual(header["sampler"], "out-of-process")
        held = [s for s in samples if t0 <= s[0] <= t1]
        # 1 s at 200 Hz is 200 ticks; at least 20, for a loaded machine (71 with 20 runnable
        # tasks on 2 cores). In process: none.
        self.assertGreaterEqual(len(held), 20)
        lines = {frames[stacks[s[2]][-1]][3] for s in held}
        self.assertEqual(lines, {4})

    def test_program_output_and_status_are_unchanged_with_output_on_both_streams(self):
        path = self.program("""\
            import sys
            for i in range(3):
                print("out", i)
                print("err", i, file=sys.stderr)
            sys.exit(7)
            """)
        r = self.same_as_without(path, 1000)
        self.assertEqual(r.returncode, 7)
        self.assertEqual(self.only_samples()[0]["sampler"], "out-of-process")

    def test_in_process_when_asked(self):
        path = self.program("import time\ntime.sleep(0.2)\n")
        self.same_as_without(path, 200, sampler="in-process")
        header = self.only_samples()[0]
        self.assertEqual(header["sampler"], "in-process")
        self.assertGreater(header["samples"], 10)


class _FakeMemory:
    """A process's memory as {address: bytes}."""

    def __init__(self, blocks):
        self.blocks = blocks

    def read(self, addr, size):
        for base, data in self.blocks.items():
            if base <= addr and addr + size <= base + len(data):
                return data[addr - base:addr - base + size]
        raise reader.Unreadable("no block at 0x%x" % addr)


def _ascii_str(type_addr, text):
    """A compact ASCII str as 3.11 lays it out (cpython/unicodeobject.h): refcount, type,
    length, hash, state (kind 1 << 2, compact 1 << 5, ascii 1 << 6), then the text at 48."""
    state = (1 << 2) | (1 << 5) | (1 << 6)
    return struct.pack("<qQqqI4xQ", 1, type_addr, len(text), -1, state, 0) + text


@unittest.skipUnless(ON_311, "the out-of-process sampler reads CPython 3.11 only")
class ReaderTest(unittest.TestCase):
    def reader(self, blocks):
        r = reader.Reader.__new__(reader.Reader)  # no process: a fake memory
        r.mem, r.str_type = _FakeMemory(blocks), 0x1000
        return r

    def test_a_name_is_read_only_from_a_str_object_without_nul(self):
        # A code object read while the program was making it had NUL names (torch's import).
        r = self.reader({0x100: _ascii_str(0x1000, b"forward"),
                         0x200: _ascii_str(0x2000, b"forward"),    # not a str (yet)
                         0x300: _ascii_str(0x1000, b"\0\0\0\0")})
        self.assertEqual(r._text(0x100), "forward")
        with self.assertRaises(reader.Unreadable):
            r._text(0x200)
        with self.assertRaises(reader.Unreadable):
            r._text(0x300)


@unittest.skipUnless(ON_311, "the out-of-process sampler reads CPython 3.11 only")
class LineTableTest(unittest.TestCase):
    def test_lines_of_every_code_unit_match_co_lines(self):
        def several_lines(x):
            y = x + 1
            if y:
                return [i for i in range(y)]
            return None
        for code in (several_lines.__code__, reader.parse_linetable.__code__):
            want = [0] * (len(code.co_code) // 2)
            for start, end, line in code.co_lines():
                for unit in range(start // 2, end // 2):
                    want[unit] = line or 0
            got = reader.parse_linetable(code.co_linetable, code.co_firstlineno, len(want))
            self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
