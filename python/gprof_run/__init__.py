"""gprof-run installed from the wheel (pyproject.toml).

The `gprof-run` command pip puts on PATH: it replaces itself with the real launcher,
gprof_run/bin/gprof-run, which finds libgprof_inject.so and the Python start-up hook next to
itself (../lib). Same pid, same signals, same exit status: nothing of this script stays.
"""
import os
import sys


def launcher_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gprof-run")


def main():
    exe = launcher_path()
    try:
        os.execv(exe, [exe] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("gprof-run: cannot run %s: %s (reinstall the gprof-run wheel)\n" % (exe, e))
        return 127
