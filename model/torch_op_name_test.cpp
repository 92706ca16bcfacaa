// ParseTorchOpName / IsTorchCpuOpName on NVTX texts copied from torch 2.15's NVTX profiler
// (gprof-run's own trace of a Linear + GELU + AdamW step on CPU), with the expected parts read
// off by hand.
#include "model/torch_op_name.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

TorchOpName Parse(std::string_view text) {
  TorchOpName t;
  EXPECT_TRUE(ParseTorchOpName(text, &t)) << text;
  return t;
}

TEST(TorchOpName, OpIdOnly) {
  const TorchOpName t = Parse("aten::empty, op_id = 1");
  EXPECT_EQ(t.name, "aten::empty");
  EXPECT_EQ(t.op_id, 1u);
  EXPECT_EQ(t.seq, -1);
  EXPECT_EQ(t.shapes, "");
  EXPECT_TRUE(t.cpu_op);
}

TEST(TorchOpName, SequenceNumberAndOpId) {
  const TorchOpName t = Parse("SumBackward0, seq = 3, op_id = 33");
  EXPECT_EQ(t.name, "SumBackward0");
  EXPECT_EQ(t.seq, 3);
  EXPECT_EQ(t.op_id, 33u);
  EXPECT_TRUE(t.cpu_op);
}

TEST(TorchOpName, ShapesAndInputOpIdsWithRecordShapes) {
  const TorchOpName t =
      Parse("aten::uniform_, op_id = 7, sizes = [[3, 4], [], [], []], input_op_ids = [(2,0), "
            "(0,-1), (0,-1), (0,-1)]");
  EXPECT_EQ(t.name, "aten::uniform_");
  EXPECT_EQ(t.op_id, 7u);
  EXPECT_EQ(t.shapes, "[[3, 4], [], [], []]");
  const TorchOpName d = Parse("aten::detach, seq = 0, op_id = 2, sizes = [[3, 4]], "
                              "input_op_ids = [(1,0)]");
  EXPECT_EQ(d.name, "aten::detach");
  EXPECT_EQ(d.seq, 0);
  EXPECT_EQ(d.op_id, 2u);
  EXPECT_EQ(d.shapes, "[[3, 4]]");
}

TEST(TorchOpName, UserAnnotationsAreNotCpuOps) {
  EXPECT_FALSE(Parse("my_region, op_id = 12").cpu_op);
  EXPECT_FALSE(Parse("Optimizer.step#AdamW.step, op_id = 80").cpu_op);
  EXPECT_FALSE(Parse("Torch-Compiled Region: 0/0, op_id = 4").cpu_op);
  EXPECT_TRUE(Parse("autograd::engine::evaluate_function: SumBackward0, op_id = 32").cpu_op);
  // A name with a comma of its own keeps it.
  EXPECT_EQ(Parse("load, then copy, op_id = 9").name, "load, then copy");
}

TEST(TorchOpName, OtherRangesAreLeftAlone) {
  TorchOpName t;
  t.name = "untouched";
  EXPECT_FALSE(ParseTorchOpName("forward", &t));
  EXPECT_FALSE(ParseTorchOpName("load, sizes = [3]", &t));   // no op_id / seq
  EXPECT_FALSE(ParseTorchOpName("x, op_id = 12a", &t));      // not a number
  EXPECT_FALSE(ParseTorchOpName(", op_id = 3", &t));         // no name left
  EXPECT_FALSE(ParseTorchOpName("a, op_id = 99999999999999999999", &t));  // > 19 digits
  EXPECT_EQ(t.name, "untouched");
}

TEST(TorchOpName, CpuOpNames) {
  EXPECT_TRUE(IsTorchCpuOpName("c10d::allreduce_"));
  EXPECT_TRUE(IsTorchCpuOpName("MmBackward0"));
  EXPECT_TRUE(IsTorchCpuOpName("AddmmBackward12"));
  EXPECT_FALSE(IsTorchCpuOpName("Backward0"));       // no node name before it
  EXPECT_FALSE(IsTorchCpuOpName("my Backward0"));    // not an identifier
  EXPECT_FALSE(IsTorchCpuOpName("MmBackward"));      // no version number
  EXPECT_FALSE(IsTorchCpuOpName("ProfilerStep#3"));
  // torch 2.15's torch.profiler files y.detach() and w.detach_() under cpu_op, unnamespaced;
  // a user's range of a longer name stays an annotation.
  EXPECT_TRUE(IsTorchCpuOpName("detach"));
  EXPECT_TRUE(IsTorchCpuOpName("detach_"));
  EXPECT_FALSE(IsTorchCpuOpName("detached"));
  EXPECT_FALSE(IsTorchCpuOpName("my_detach"));
}

}  // namespace
}  // namespace gprof
