"""dataloader_bound on an unmodified PyTorch loop (dataloader_loop.py, on the CPU), under
gprof-run: a DataLoader with num_workers=0 whose __getitem__ does several milliseconds of Python
work per sample is named, with the loader and its num_workers; the same loop over a dataset that
hands out ready tensors is not. Only the id and the loader's settings are asserted: the share
itself depends on the machine (the heavy loader took 39 % of the step time with half the work
per sample on the loaded 2-core test machine, the cheap one 0.3 %: either side of the 10 %
threshold by a wide margin).

Environment: TORCH_PYTHON (a Python with torch), GPROF_RUN (the gprof-run under test).
"""
import json
import os
import subprocess
import tempfile
import unittest

from test_torch_e2e import GPROF_RUN, HERE, TORCH_PYTHON
from torch_runner import kept_output


@unittest.skipUnless(TORCH_PYTHON and os.path.exists(TORCH_PYTHON) and GPROF_RUN,
                     "no Python with torch (TORCH_PYTHON) or no gprof-run (GPROF_RUN)")
class TorchDataLoader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="gprof_torch_dataloader.")
        cls.tmp = cls._tmp.name

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def findings(self, kind):
        # Kept for tests/consumers: TensorBoard's plugin's step breakdown beside ours.
        out = kept_output("dataloader_" + kind, self.tmp)
        cmd = [GPROF_RUN, "-q", "-o", out, TORCH_PYTHON, os.path.join(HERE, "dataloader_loop.py"),
               kind]
        p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "findings.json")) as f:
            return {x["id"]: x for x in json.load(f)["findings"]}

    def test_heavy_getitem_on_the_training_thread_is_dataloader_bound(self):
        found = self.findings("heavy")
        self.assertIn("dataloader_bound", found, json.dumps(found, indent=1))
        f = found["dataloader_bound"]
        self.assertEqual(f["evidence"]["num_workers"], 0)
        self.assertEqual(f["evidence"]["dataset"], "HeavyDataset")
        self.assertEqual(f["evidence"]["iterator"], "_SingleProcessDataLoaderIter")
        self.assertEqual(f["where"]["name"],
                         "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")
        self.assertIn("num_workers=0", f["title"])
        self.assertIn("persistent_workers", f["advice"])

    def test_cheap_getitem_is_not_dataloader_bound(self):
        found = self.findings("cheap")
        self.assertNotIn("dataloader_bound", found, json.dumps(found, indent=1))


if __name__ == "__main__":
    unittest.main()
