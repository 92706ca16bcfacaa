// Unit tests: torch's forward-to-backward links (fwdbwd_links.h) and their fwdbwd flows and args
// in the trace JSON. The ops are those torch 2.15's own torch.profiler trace shows for
// `Linear(4, 3, bias=False)(x).sum().backward()` on the CPU: forward aten::linear and aten::t
// (sequence number 0), aten::matmul and aten::mm (1), aten::sum (2); backward SumBackward0 (2),
// MmBackward0 (1), TBackward0 (0), each inside its "autograd::engine::evaluate_function: ...".
// There torch links aten::sum -> SumBackward0, aten::mm -> MmBackward0, aten::t -> TBackward0.
#include "outputs/trace/fwdbwd_links.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"

namespace gprof {
namespace {

constexpr uint32_t kMain = 100;

struct Op {
  const char* name;
  uint64_t start_us, end_us;
  int32_t seq;
  uint32_t tid = kMain;
};

Profile Ops(const std::vector<Op>& ops) {
  Profile p;
  p.info.pid = kMain;
  p.info.start_ns = 1'700'000'000'000'000'000ull;
  for (const Op& o : ops) {
    HostRange r{};
    r.start_ns = p.info.start_ns + o.start_us * 1000;
    r.end_ns = p.info.start_ns + o.end_us * 1000;
    r.name = p.strings.Intern(o.name);
    r.tid = o.tid;
    r.flags = kRangeTorch | kRangeCpuOp;
    r.seq = o.seq;
    p.ranges.push_back(r);
  }
  return p;
}

// One forward and backward of the bias-free Linear, as torch numbers and nests the ops.
std::vector<Op> LinearForwardBackward(uint64_t t0 = 0, int32_t s0 = 0, uint32_t tid = kMain) {
  return {{"aten::linear", t0 + 0, t0 + 90, s0, tid},
          {"aten::t", t0 + 1, t0 + 5, s0, tid},
          {"aten::transpose", t0 + 2, t0 + 4, -1, tid},
          {"aten::matmul", t0 + 6, t0 + 80, s0 + 1, tid},
          {"aten::mm", t0 + 7, t0 + 79, s0 + 1, tid},
          {"aten::sum", t0 + 100, t0 + 110, s0 + 2, tid},
          {"autograd::engine::evaluate_function: SumBackward0", t0 + 120, t0 + 130, s0 + 2, tid},
          {"SumBackward0", t0 + 121, t0 + 129, s0 + 2, tid},
          {"autograd::engine::evaluate_function: MmBackward0", t0 + 140, t0 + 160, s0 + 1, tid},
          {"MmBackward0", t0 + 141, t0 + 159, s0 + 1, tid},
          {"aten::mm", t0 + 145, t0 + 150, -1, tid},
          {"autograd::engine::evaluate_function: TBackward0", t0 + 170, t0 + 180, s0, tid},
          {"TBackward0", t0 + 171, t0 + 179, s0, tid}};
}

// forward op name -> backward op name, over the links found.
std::map<std::string, std::string> Pairs(const Profile& p) {
  const auto links = FwdBwdLinks(p);
  std::map<uint32_t, std::string> starts, ends;
  for (const auto& [index, end] : links) {
    (end.forward ? starts : ends)[end.flow] = std::string(p.strings.Get(p.ranges[index].name));
  }
  std::map<std::string, std::string> pairs;
  for (const auto& [flow, name] : starts) pairs[name] = ends.at(flow);
  EXPECT_EQ(starts.size(), ends.size());
  return pairs;
}

TEST(FwdBwdLinks, EachForwardOpLinksToTheNodeOpOfItsBackwardAsTorchDoes) {
  const Profile p = Ops(LinearForwardBackward());
  EXPECT_EQ(Pairs(p), (std::map<std::string, std::string>{{"aten::sum", "SumBackward0"},
                                                          {"aten::mm", "MmBackward0"},
                                                          {"aten::t", "TBackward0"}}));
}

TEST(FwdBwdLinks, EvaluateFunctionOpsWithoutSequenceNumbersAsTheNvtxObserverGivesThem) {
  // torch 2.15's NVTX text: "autograd::engine::evaluate_function: MmBackward0, op_id = 71"
  // (no seq), then "MmBackward0, seq = 1, op_id = 72".
  std::vector<Op> ops = LinearForwardBackward();
  for (Op& o : ops) {
    if (std::string(o.name).starts_with(kEvaluateFunctionPrefix)) o.seq = -1;
  }
  EXPECT_EQ(Pairs(Ops(ops)), (std::map<std::string, std::string>{{"aten::sum", "SumBackward0"},
                                                                 {"aten::mm", "MmBackward0"},
                                                                 {"aten::t", "TBackward0"}}));
}

TEST(FwdBwdLinks, NoSequenceNumbersNoLinks) {
  std::vector<Op> ops = LinearForwardBackward();
  for (Op& o : ops) o.seq = -1;  // torch's ITT observer hands over names only
  EXPECT_TRUE(FwdBwdLinks(Ops(ops)).empty());
}

TEST(FwdBwdLinks, AnotherThreadsForwardWithTheSameNumbersLaterIsNotLinked) {
  // Sequence numbers count per thread: a worker thread's forward (no backward) after the
  // training step repeats 0..2. The main thread's backward keeps its own forward ops.
  std::vector<Op> ops = LinearForwardBackward();
  for (const Op& o : LinearForwardBackward(1000, 0, 200)) {
    if (std::string(o.name).find("Backward") == std::string::npos) ops.push_back(o);
  }
  const Profile p = Ops(ops);
  const auto links = FwdBwdLinks(p);
  EXPECT_EQ(links.size(), 6u);
  for (const auto& [index, end] : links) {
    EXPECT_EQ(p.ranges[index].tid, kMain) << p.strings.Get(p.ranges[index].name);
    if (!end.forward) {
      EXPECT_EQ(end.fwd_tid, kMain);
    }
  }
}

TEST(FwdBwdLinks, TraceHasOneFwdbwdFlowPerLinkWithKinetosArgsAndPassesTheChecks) {
  const Profile p = Ops(LinearForwardBackward());
  const std::string path = testing::TempDir() + "/fwdbwd.json";
  WriteTraceJson(p, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  std::map<uint64_t, std::string> start_op, end_op;  // flow id -> the op it binds to
  std::string last_op;
  nlohmann::json mm_args, mm_backward_args;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      last_op = e["name"];
      // Not every slice has args (a const json's operator[] must not be asked for a missing key).
      const nlohmann::json args = e.value("args", nlohmann::json::object());
      if (last_op == "aten::mm" && args.contains("Sequence number")) mm_args = args;
      if (last_op == "MmBackward0") mm_backward_args = args;
    }
    if (e.value("cat", "") != "fwdbwd") continue;
    EXPECT_EQ(e["name"], "fwdbwd");
    (e["ph"] == "s" ? start_op : end_op)[e["id"].get<uint64_t>()] = last_op;
    if (e["ph"] == "f") {
      EXPECT_EQ(e["bp"], "e");
    }
  }
  std::map<std::string, std::string> pairs;
  for (const auto& [id, name] : start_op) pairs[name] = end_op[id];
  EXPECT_EQ(pairs, (std::map<std::string, std::string>{{"aten::sum", "SumBackward0"},
                                                       {"aten::mm", "MmBackward0"},
                                                       {"aten::t", "TBackward0"}}));
  EXPECT_EQ(end_op.size(), 3u);
  EXPECT_EQ(mm_args["Sequence number"], 1);
  EXPECT_EQ(mm_args["Fwd thread id"], 0);  // torch's value on a forward op
  EXPECT_EQ(mm_backward_args["Sequence number"], 1);
  EXPECT_EQ(mm_backward_args["Fwd thread id"], kMain);
  EXPECT_TRUE(CheckTraceText(text.str()).empty());
}

}  // namespace
}  // namespace gprof
