"""`python -m gprof_run ...`: the same as the `gprof-run` command."""
import sys

from gprof_run import main

sys.exit(main())
