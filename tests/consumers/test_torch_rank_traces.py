"""HTA's multi-rank analyses read gprof-run's per-rank traces of a distributed job as they read
Kineto's: torch_e2e_test's `gprof-run torchrun --nproc-per-node 4 ddp_train.py 3` (four gloo
DDP ranks on the CPU, their clocks skewed by libfaketime where it is installed), kept in
TORCH_OUTPUTS/torchrun. Each rank wrote ddp_train.py.<pid>.trace.json with Kineto's
distributedInfo; HTA finds a file's rank with its own rule (the first `"rank": N` in the file,
trace_file.create_rank_to_trace_dict), and its rank r must be the process torchrun started as
RANK r (the merged view's inputs: rank and pid from each process's environment). HTA is given
the run's tensorboard/ folder, as a user gives it torch.profiler's trace folder.

What HTA gives on CPU ranks: its iterations (ProfilerStep#N: 3 optimizer steps, then the tail
to the exit, #3) and every gloo collective per rank; get_comm_comp_overlap has one row per rank
with no value (NaN: its overlap is between GPU communication and compute kernels, and gloo on
the CPU launches none). Its straggler view (get_potential_stragglers) needs NCCL GPU kernels
(analyzers/straggler.py: ncclKernel* on a stream) and stops with "argmax of an empty sequence"
on a CPU-only job, torch.profiler's traces alike: it is not run here.
"""
import glob
import math
import os
import socket
import unittest

from consumers import hta_analysis, load_json, needs_consumers, quiet, tensorboard_profile, \
    torch_output

RANKS = [0, 1, 2, 3]
OPTIMIZER_STEPS = 3
PARAMETERS = 2  # nn.Linear's weight and bias: one all_reduce each per step


@needs_consumers
class HtaReadsTheRankTraces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = torch_output("torchrun")
        cls.tensorboard = os.path.join(cls.out, "tensorboard")
        merged = load_json(os.path.join(cls.out, "merged", "trace.json"))
        cls.pid_of_rank = {i["rank"]: i["pid"] for i in merged["gprof"]["inputs"]
                           if i["rank"] >= 0}

    def ranks_by_hta(self):
        """HTA's own map of a trace folder, {rank: file} (trace_file.get_trace_files): the
        run's tensorboard/ folder, which holds a distributed run's ranks' traces only."""
        from hta.common.trace_file import get_trace_files
        with quiet():
            return get_trace_files(self.tensorboard)

    def link_of_rank(self, rank):
        # tensorboard_trace_handler's default worker name, <hostname>_<pid>.
        return "%s_%d.pt.trace.json" % (socket.gethostname(), self.pid_of_rank[rank])

    def test_hta_maps_each_trace_of_the_folder_to_its_rank(self):
        # The launcher's trace (torchrun's, without a rank) is not in the folder: HTA would
        # take it for rank 0 too, and keep whichever of the two it listed last.
        files = sorted(f for f in os.listdir(self.tensorboard) if f.endswith(".json"))
        self.assertEqual(files, sorted(self.link_of_rank(r) for r in RANKS))
        by_rank = self.ranks_by_hta()
        self.assertEqual(sorted(by_rank), RANKS)
        for rank, path in by_rank.items():
            self.assertEqual(os.path.basename(path), self.link_of_rank(rank))

    def test_tensorboard_lists_one_worker_per_rank(self):
        # The plugin's own file-name rule (consts.WORKER_PATTERN, as its RunLoader applies it):
        # <worker>[.<span>].pt.trace.json. A name ending in .<pid> would make the four ranks
        # four spans of one worker.
        from torch_tb_profiler import consts
        workers = {}
        for f in os.listdir(self.tensorboard):
            m = consts.WORKER_PATTERN.match(f)
            self.assertIsNotNone(m, f)
            workers[m.group(1)] = m.group(2)
        self.assertEqual(workers, {"%s_%d" % (socket.gethostname(), self.pid_of_rank[r]): None
                                   for r in RANKS})

    def test_iterations_collectives_and_overlap_per_rank(self):
        ta = hta_analysis(self.ranks_by_hta(), self.out)
        self.assertEqual([int(s) for s in ta.get_profiler_steps()],
                         list(range(OPTIMIZER_STEPS + 1)))
        sym = ta.t.symbol_table.get_sym_id_map()
        for rank in RANKS:
            df = ta.t.get_trace(rank)
            self.assertEqual(int(df["name"].eq(sym["gloo:all_reduce"]).sum()),
                             OPTIMIZER_STEPS * PARAMETERS, rank)
            self.assertEqual(int(df["name"].eq(sym["gloo:barrier"]).sum()), 1, rank)
        with quiet():
            overlap = ta.get_comm_comp_overlap(visualize=False)
        self.assertEqual(sorted(overlap["rank"]), RANKS)
        self.assertTrue(all(math.isnan(v) for v in overlap["comp_comm_overlap_pctg"]), overlap)


@needs_consumers
class TensorBoardPluginReadsTheRankTraces(unittest.TestCase):
    def test_each_worker_has_its_rank_and_world_size(self):
        # The plugin groups workers for its distributed view by distributedInfo, and takes the
        # gloo collectives for communication (its GlooOpNameSet). It keys each collective by its
        # `External id` arg (event_parser.communication_data), which Kineto writes on every op
        # and gprof-run's host ranges do not have: all of a worker's collectives fold into one
        # there, so their count is not compared.
        out = torch_output("torchrun")
        seen = {}
        for path in glob.glob(os.path.join(out, "ddp_train.py.*.trace.json")):
            data = tensorboard_profile(load_json(path))
            info = data.distributed_info
            seen[info["rank"]] = info["world_size"]
            self.assertTrue(data.has_communication, path)
            self.assertEqual([c.name for c in data.comm_node_list][:1], ["gloo:all_reduce"])
        self.assertEqual(seen, {r: 4 for r in RANKS})


if __name__ == "__main__":
    unittest.main()
