// Perfetto writer tests: a small profile is encoded and decoded by protoc against
// perfetto_trace_test.proto (upstream's field numbers), then checked the way a user would look at
// it in Perfetto: tracks and their names, begin/end nesting per track, flows from launch to
// kernel, interning, counters; and against the JSON trace of the same profile (same slices,
// instants, counters and flows). Skips with a message when protoc is not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/samples/python_slices.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/trace/trace_json.h"
#include "tests/support/process.h"

namespace gprof {
namespace {

namespace fs = std::filesystem;

// ---- protoc's text output as a tree ------------------------------------------------------------

struct Node {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> kids;

  std::string Get(const std::string& key) const {
    for (const auto& [k, v] : fields) {
      if (k == key) return v;
    }
    return "";
  }
  bool Has(const std::string& key) const {
    for (const auto& [k, v] : fields) {
      if (k == key) return true;
    }
    return false;
  }
  std::vector<std::string> All(const std::string& key) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : fields) {
      if (k == key) out.push_back(v);
    }
    return out;
  }
  const Node* Kid(const std::string& key) const {
    for (const auto& [k, n] : kids) {
      if (k == key) return n.get();
    }
    return nullptr;
  }
  std::vector<const Node*> Kids(const std::string& key) const {
    std::vector<const Node*> out;
    for (const auto& [k, n] : kids) {
      if (k == key) out.push_back(n.get());
    }
    return out;
  }
};

std::string Unquote(const std::string& v) {
  if (v.size() < 2 || v.front() != '"') return v;
  std::string out;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] == '\\' && i + 2 < v.size()) ++i;
    out.push_back(v[i]);
  }
  return out;
}

// Parses protoc --decode output; fails the test on lines it does not understand and on unknown
// fields (printed by protoc as bare field numbers).
std::unique_ptr<Node> ParseText(const std::string& text) {
  auto root = std::make_unique<Node>();
  std::vector<Node*> stack{root.get()};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    EXPECT_FALSE(std::isdigit(static_cast<unsigned char>(line[0])))
        << "field unknown to the Perfetto schema: " << line;
    if (line == "}") {
      stack.pop_back();
      continue;
    }
    if (line.size() > 2 && line.compare(line.size() - 2, 2, " {") == 0) {
      auto kid = std::make_unique<Node>();
      Node* raw = kid.get();
      stack.back()->kids.emplace_back(line.substr(0, line.size() - 2), std::move(kid));
      stack.push_back(raw);
      continue;
    }
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      ADD_FAILURE() << "unexpected protoc output line: " << line;
      continue;
    }
    stack.back()->fields.emplace_back(line.substr(0, colon), Unquote(line.substr(colon + 2)));
  }
  return root;
}

bool HaveProtoc() {
  return testing::RunProcess({"/bin/sh", "-c", "command -v protoc"}).exit_code == 0;
}

std::unique_ptr<Node> Decode(const std::string& bytes) {
  const std::string proto_dir = std::string(GPROF_SOURCE_DIR) + "/outputs/perfetto";
  testing::ProcessOptions opt;
  opt.stdin_data = bytes;
  const testing::ProcessResult r =
      testing::RunProcess({"protoc", "--decode=perfetto.protos.Trace", "-I" + proto_dir,
                           proto_dir + "/perfetto_trace_test.proto"},
                          opt);
  EXPECT_EQ(r.exit_code, 0) << "protoc could not decode the trace: " << r.err;
  return ParseText(r.out);
}

// ---- a small profile ---------------------------------------------------------------------------

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;
constexpr uint32_t kPid = 4242;
constexpr uint32_t kMain = 4242;
constexpr uint32_t kWorker = 4250;

Profile SmallProfile() {
  Profile p;
  p.info.pid = kPid;
  p.info.program = "train";
  p.info.start_ns = kT0;
  p.threads.push_back({kWorker, p.strings.Intern("loader")});
  p.devices.push_back({0, p.strings.Intern("NVIDIA H200"), 0, 9, 0, 132, 1024, 2048, 65536, 65536,
                       49152, 233472, 32});
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.api_names.push_back({31, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemcpyAsync")});
  LaunchConfig lc{};
  lc.grid[0] = 4, lc.grid[1] = 2, lc.grid[2] = 1;
  lc.block[0] = 256, lc.block[1] = lc.block[2] = 1;
  p.launch_configs.push_back(lc);
  const StringId kernel = p.strings.Intern("_Z10add_scalarPff");
  const StringId forward = p.strings.Intern("forward");
  p.steps.push_back({kT0 + 1'000, kT0 + 90'000, 3, kMain});
  p.ranges.push_back({kT0 + 2'000, kT0 + 80'000, forward, kMain, 0, 0, 0});
  p.ranges.push_back({kT0 + 2'500, kT0 + 95'000, p.strings.Intern("io"), kWorker, 0, kRangeStartEnd, 0});
  // Three launches on the main thread; the third kernel overlaps the second on stream 7 (its
  // call at 25 us, before it: a kernel that started before its call would get no flow).
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t t = kT0 + 10'000 + i * 10'000 - (i == 2 ? 5'000 : 0);
    p.api_calls.push_back({t, t + 3'000, 100 + i, kMain, 211, ApiDomain::kRuntime, 0, 0});
    const uint64_t ks = i == 2 ? kT0 + 26'000 : t + 4'000;
    p.kernels.push_back({ks, ks + 5'000, 100 + i, kernel, 0, 7});
  }
  p.api_calls.push_back({kT0 + 50'000, kT0 + 52'000, 200, kMain, 31, ApiDomain::kRuntime, 0, 0});
  Memcpy m{};
  m.start_ns = kT0 + 53'000, m.end_ns = kT0 + 54'000, m.bytes = 4096, m.correlation_id = 200;
  m.stream_id = 7, m.kind = CopyKind::kHtoD, m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  p.memcpys.push_back(m);
  p.marks.push_back({kT0 + 60'000, p.strings.Intern("checkpoint"), kWorker, 0, 0, 0});
  p.memory_ops.push_back({kT0 + 5'000, 0xA000, 1024, 0, 0xffffffffu, MemoryOpKind::kAlloc,
                          MemKind::kDevice, 0, 0, 0});
  p.memory_ops.push_back({kT0 + 70'000, 0xA000, 0, 0, 0xffffffffu, MemoryOpKind::kFree,
                          MemKind::kDevice, 0, 0, 0});
  return p;
}

struct Decoded {
  std::unique_ptr<Node> root;
  std::vector<const Node*> packets;
  std::map<uint64_t, std::string> names;        // event name iid -> name
  std::map<uint64_t, std::string> categories;   // category iid -> name
  std::map<uint64_t, std::string> arg_names;    // debug annotation name iid -> name
  std::map<uint64_t, const Node*> tracks;       // uuid -> TrackDescriptor
};

Decoded DecodeTrace(const std::string& bytes) {
  Decoded d;
  d.root = Decode(bytes);
  d.packets = d.root->Kids("packet");
  return d;
}

uint64_t U(const std::string& s) { return s.empty() ? 0 : std::stoull(s); }

class PerfettoTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveProtoc()) GTEST_SKIP() << "protoc not installed (Debian: protobuf-compiler, see scripts/setup)";
  }
};

TEST_F(PerfettoTraceTest, DecodesWithUpstreamFieldNumbersAndInternsEveryNameBeforeUse) {
  const Decoded d = DecodeTrace(FormatPerfettoTrace(SmallProfile()));
  ASSERT_GT(d.packets.size(), 10u);
  // First packet: clears the incremental state and interns categories and argument names.
  const Node* first = d.packets[0];
  EXPECT_EQ(first->Get("sequence_flags"), "1");
  EXPECT_EQ(first->Get("trusted_packet_sequence_id"), "1");
  ASSERT_NE(first->Kid("interned_data"), nullptr);

  std::map<uint64_t, std::string> names, categories, args;
  std::set<std::string> seen_names;
  for (size_t i = 0; i < d.packets.size(); ++i) {
    const Node* p = d.packets[i];
    EXPECT_EQ(p->Get("trusted_packet_sequence_id"), "1") << "packet " << i;
    if (const Node* in = p->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) {
        EXPECT_TRUE(names.emplace(U(e->Get("iid")), e->Get("name")).second)
            << "iid " << e->Get("iid") << " interned twice";
        EXPECT_TRUE(seen_names.insert(e->Get("name")).second) << e->Get("name") << " interned twice";
      }
      for (const Node* e : in->Kids("event_categories")) categories[U(e->Get("iid"))] = e->Get("name");
      for (const Node* e : in->Kids("debug_annotation_names")) args[U(e->Get("iid"))] = e->Get("name");
    }
    const Node* ev = p->Kid("track_event");
    if (ev == nullptr) continue;
    EXPECT_EQ(p->Get("sequence_flags"), "2") << "event packet " << i << " must need incremental state";
    EXPECT_TRUE(p->Has("timestamp"));
    if (ev->Has("name_iid")) {
      EXPECT_TRUE(names.count(U(ev->Get("name_iid")))) << "name iid used before it was interned";
    }
    for (const std::string& c : ev->All("category_iids")) EXPECT_TRUE(categories.count(U(c)));
    for (const Node* a : ev->Kids("debug_annotations")) EXPECT_TRUE(args.count(U(a->Get("name_iid"))));
  }
  for (const char* n : {"add_scalar(float*, float)", "cudaLaunchKernel", "cudaMemcpyAsync",
                        "ProfilerStep#3", "forward", "io", "checkpoint",
                        "Memcpy HtoD (Pageable -> Device)"}) {
    EXPECT_TRUE(seen_names.count(n)) << n;
  }
  std::set<std::string> cats;
  for (const auto& [iid, c] : categories) cats.insert(c);
  for (const char* c : {"kernel", "cuda_runtime", "user_annotation", "gpu_user_annotation", "gpu_memcpy"}) {
    EXPECT_TRUE(cats.count(c)) << c;
  }
}

TEST_F(PerfettoTraceTest, TracksAreTheProcessItsThreadsAndTheGpuWithItsStreams) {
  const Decoded d = DecodeTrace(FormatPerfettoTrace(SmallProfile()));
  std::map<uint64_t, const Node*> tracks;
  for (const Node* p : d.packets) {
    if (const Node* t = p->Kid("track_descriptor")) {
      EXPECT_TRUE(tracks.emplace(U(t->Get("uuid")), t).second) << "uuid reused";
    }
  }
  const auto find = [&](auto pred) -> const Node* {
    for (const auto& [uuid, t] : tracks) {
      if (pred(t)) return t;
    }
    return nullptr;
  };
  const Node* process = find([](const Node* t) { return t->Kid("process") != nullptr; });
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->Kid("process")->Get("pid"), "4242");
  EXPECT_EQ(process->Kid("process")->Get("process_name"), "train (pid 4242)");
  const Node* worker = find([](const Node* t) {
    return t->Kid("thread") != nullptr && t->Kid("thread")->Get("tid") == "4250";
  });
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->Kid("thread")->Get("thread_name"), "loader");
  EXPECT_EQ(worker->Kid("thread")->Get("pid"), "4242");
  const Node* gpu = find([](const Node* t) { return t->Get("name") == "GPU 0 NVIDIA H200"; });
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->Get("child_ordering"), "EXPLICIT");
  const Node* stream = find([](const Node* t) { return t->Get("name") == "stream 7"; });
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->Get("parent_uuid"), gpu->Get("uuid"));
  const Node* overflow =
      find([](const Node* t) { return t->Get("name") == "stream 7 (overlapping work 1)"; });
  ASSERT_NE(overflow, nullptr) << "the overlapping kernel needs its own lane";
  EXPECT_EQ(overflow->Get("parent_uuid"), gpu->Get("uuid"));
  const Node* start_end =
      find([](const Node* t) { return t->Get("name") == "loader (NVTX start/end ranges)"; });
  ASSERT_NE(start_end, nullptr);
  EXPECT_EQ(start_end->Get("parent_uuid"), process->Get("uuid"));
  const Node* counter = find([](const Node* t) { return t->Kid("counter") != nullptr; });
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(counter->Get("name"), "GPU 0 memory in use");
  EXPECT_EQ(counter->Kid("counter")->Get("unit"), "UNIT_SIZE_BYTES");
  EXPECT_EQ(counter->Get("parent_uuid"), gpu->Get("uuid"));

  // Every event refers to a described track; counters only to the counter track.
  for (const Node* p : d.packets) {
    const Node* ev = p->Kid("track_event");
    if (ev == nullptr) continue;
    ASSERT_TRUE(tracks.count(U(ev->Get("track_uuid"))));
    EXPECT_EQ(ev->Get("type") == "TYPE_COUNTER", ev->Get("track_uuid") == counter->Get("uuid"));
  }
}

TEST_F(PerfettoTraceTest, SlicesNestPerTrackInTimeOrderAndFlowsGoFromLaunchToKernel) {
  const Decoded d = DecodeTrace(FormatPerfettoTrace(SmallProfile()));
  std::map<uint64_t, std::string> names;
  std::map<std::string, uint64_t> arg_iid;
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>> open;  // track -> (ts, name)
  std::map<uint64_t, uint64_t> flow_start_track, flow_end_track;
  std::map<uint64_t, std::string> flow_start_name, flow_end_name;
  std::vector<uint64_t> counter_values;
  uint64_t last_ts = 0;
  int begins = 0;
  for (const Node* p : d.packets) {
    if (const Node* in = p->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) names[U(e->Get("iid"))] = e->Get("name");
      for (const Node* e : in->Kids("debug_annotation_names")) arg_iid[e->Get("name")] = U(e->Get("iid"));
    }
    const Node* ev = p->Kid("track_event");
    if (ev == nullptr) continue;
    const uint64_t ts = U(p->Get("timestamp"));
    EXPECT_GE(ts, last_ts) << "packets are written in time order";
    last_ts = ts;
    const uint64_t track = U(ev->Get("track_uuid"));
    const std::string type = ev->Get("type");
    const std::string name = names[U(ev->Get("name_iid"))];
    if (type == "TYPE_SLICE_BEGIN") {
      ++begins;
      open[track].push_back({ts, name});
      for (const std::string& id : ev->All("flow_ids")) {
        EXPECT_TRUE(flow_start_track.emplace(U(id), track).second) << "flow id reused";
        flow_start_name[U(id)] = name;
        // The flow id is the launch's correlation id.
        bool corr = false;
        for (const Node* a : ev->Kids("debug_annotations")) {
          if (U(a->Get("name_iid")) == arg_iid["correlation"]) corr = a->Get("uint_value") == id;
        }
        EXPECT_TRUE(corr) << "flow " << id << " is not the call's correlation id";
      }
      for (const std::string& id : ev->All("terminating_flow_ids")) {
        EXPECT_TRUE(flow_end_track.emplace(U(id), track).second) << "flow id ends twice";
        flow_end_name[U(id)] = name;
      }
    } else if (type == "TYPE_SLICE_END") {
      ASSERT_FALSE(open[track].empty()) << "end without a begin on track " << track;
      EXPECT_LE(open[track].back().first, ts);
      open[track].pop_back();
    } else if (type == "TYPE_COUNTER") {
      counter_values.push_back(U(ev->Get("counter_value")));
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "slice left open on " << track;
  // step, forward, io, 4 API calls, 3 kernels, 1 memcpy, gpu_user_annotation spans of the step and
  // of forward on stream 7 and the overflow lane.
  EXPECT_GE(begins, 12);
  ASSERT_EQ(flow_start_track.size(), 4u);
  for (const auto& [id, track] : flow_start_track) {
    ASSERT_TRUE(flow_end_track.count(id)) << "flow " << id << " never ends";
    EXPECT_NE(flow_end_track[id], track);
    EXPECT_TRUE(flow_start_name[id] == "cudaLaunchKernel" || flow_start_name[id] == "cudaMemcpyAsync");
  }
  EXPECT_EQ(flow_end_name[100], "add_scalar(float*, float)");
  EXPECT_EQ(flow_end_name[200], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_NE(flow_end_track[101], flow_end_track[102]) << "overlapping kernels on separate lanes";
  EXPECT_EQ(counter_values, (std::vector<uint64_t>{1024, 0}));
}

// With torch's caching allocator events (--profile-memory): a second counter track on the GPU,
// "GPU 0 memory allocated by torch", beside CUDA's "GPU 0 memory in use", each with its own
// values. SmallProfile's CUDA counter reads 1024 then 0; torch's blocks: +1 MiB at 10 us, +2 MiB
// at 20 us, the first freed at 30 us -> 1 MiB, 3 MiB, 2 MiB; its peak marker says 3.00 MB.
TEST_F(PerfettoTraceTest, TorchAllocatedMemoryIsACounterTrackOfItsOwn) {
  Profile p = SmallProfile();
  const uint64_t mib = 1 << 20;
  p.torch_memory = {{kT0 + 10'000, 0x100000, mib, kMain, 0, TorchMemAction::kAlloc, 0, 0},
                    {kT0 + 20'000, 0x200000, 2 * mib, kMain, 0, TorchMemAction::kAlloc, 0, 0},
                    {kT0 + 30'000, 0x100000, mib, kMain, 0, TorchMemAction::kFree, 0, 0}};
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p));
  std::map<std::string, std::string> counter_uuid;  // name -> uuid
  std::map<uint64_t, std::string> names;
  for (const Node* pk : d.packets) {
    if (const Node* t = pk->Kid("track_descriptor"); t != nullptr && t->Kid("counter")) {
      counter_uuid[t->Get("name")] = t->Get("uuid");
    }
    if (const Node* in = pk->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) names[U(e->Get("iid"))] = e->Get("name");
    }
  }
  ASSERT_EQ(counter_uuid.size(), 2u);
  ASSERT_TRUE(counter_uuid.count("GPU 0 memory in use"));
  ASSERT_TRUE(counter_uuid.count("GPU 0 memory allocated by torch"));
  std::map<std::string, std::vector<uint64_t>> values;  // track uuid -> values
  bool torch_peak = false;
  for (const Node* pk : d.packets) {
    const Node* ev = pk->Kid("track_event");
    if (ev == nullptr) continue;
    if (ev->Get("type") == "TYPE_COUNTER") {
      values[ev->Get("track_uuid")].push_back(U(ev->Get("counter_value")));
    }
    torch_peak |= names[U(ev->Get("name_iid"))] == "peak memory allocated by torch: 3.00 MB";
  }
  EXPECT_EQ(values[counter_uuid["GPU 0 memory in use"]], (std::vector<uint64_t>{1024, 0}));
  EXPECT_EQ(values[counter_uuid["GPU 0 memory allocated by torch"]],
            (std::vector<uint64_t>{mib, 3 * mib, 2 * mib}));
  EXPECT_TRUE(torch_peak);
}

TEST_F(PerfettoTraceTest, KernelArgsAreCorrelationStreamGridAndBlock) {
  const Decoded d = DecodeTrace(FormatPerfettoTrace(SmallProfile()));
  std::map<uint64_t, std::string> arg_names, names;
  bool checked = false;
  for (const Node* p : d.packets) {
    if (const Node* in = p->Kid("interned_data")) {
      for (const Node* e : in->Kids("debug_annotation_names")) arg_names[U(e->Get("iid"))] = e->Get("name");
      for (const Node* e : in->Kids("event_names")) names[U(e->Get("iid"))] = e->Get("name");
    }
    const Node* ev = p->Kid("track_event");
    if (ev == nullptr || names[U(ev->Get("name_iid"))] != "add_scalar(float*, float)" || checked) continue;
    std::map<std::string, const Node*> args;
    for (const Node* a : ev->Kids("debug_annotations")) args[arg_names[U(a->Get("name_iid"))]] = a;
    ASSERT_EQ(args.size(), 4u);
    EXPECT_EQ(args["correlation"]->Get("uint_value"), "100");
    EXPECT_EQ(args["stream"]->Get("uint_value"), "7");
    const auto xyz = [](const Node* a) {
      std::vector<std::string> v;
      const Node* n = a->Kid("nested_value");
      EXPECT_EQ(n->Get("nested_type"), "ARRAY");
      for (const Node* e : n->Kids("array_values")) v.push_back(e->Get("int_value"));
      return v;
    };
    EXPECT_EQ(xyz(args["grid"]), (std::vector<std::string>{"4", "2", "1"}));
    EXPECT_EQ(xyz(args["block"]), (std::vector<std::string>{"256", "1", "1"}));
    checked = true;
  }
  EXPECT_TRUE(checked);
}

// A launch configuration past the table (a damaged dump) is the empty one, as in the JSON trace:
// grid and block [0, 0, 0]; an index of UINT32_MAX once overflowed the per-config cache.
TEST_F(PerfettoTraceTest, UnknownLaunchConfigsHaveAnEmptyGridAndBlock) {
  Profile p = SmallProfile();
  p.kernels[1].launch_config = 5;
  p.kernels[2].launch_config = 0xffffffffu;
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p));
  std::map<uint64_t, std::string> arg_names;
  std::map<uint64_t, std::vector<uint64_t>> grid, block;  // by correlation id
  for (const Node* pk : d.packets) {
    if (const Node* in = pk->Kid("interned_data")) {
      for (const Node* e : in->Kids("debug_annotation_names")) arg_names[U(e->Get("iid"))] = e->Get("name");
    }
    const Node* ev = pk->Kid("track_event");
    if (ev == nullptr) continue;
    std::map<std::string, const Node*> args;
    for (const Node* a : ev->Kids("debug_annotations")) args[arg_names[U(a->Get("name_iid"))]] = a;
    if (!args.count("grid")) continue;
    const uint64_t corr = U(args["correlation"]->Get("uint_value"));
    for (const auto& [name, out] : {std::pair{"grid", &grid}, std::pair{"block", &block}}) {
      for (const Node* e : args[name]->Kid("nested_value")->Kids("array_values")) {
        (*out)[corr].push_back(U(e->Get("int_value")));
      }
    }
  }
  EXPECT_EQ(grid[100], (std::vector<uint64_t>{4, 2, 1}));
  EXPECT_EQ(block[100], (std::vector<uint64_t>{256, 1, 1}));
  for (uint64_t corr : {101, 102}) {
    EXPECT_EQ(grid[corr], (std::vector<uint64_t>{0, 0, 0})) << corr;
    EXPECT_EQ(block[corr], (std::vector<uint64_t>{0, 0, 0})) << corr;
  }
}

// Same plan as the JSON: the same slices (name, start, end; an END closes the innermost open
// slice of its track, as Perfetto reads it), as many instants, counter points and flows.
TEST_F(PerfettoTraceTest, ShowsWhatTheJsonTraceShows) {
  const Profile p = SmallProfile();
  const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(p, "t"));
  const uint64_t base = j["baseTimeNanoseconds"].get<uint64_t>();
  const auto ns = [](double us) { return static_cast<uint64_t>(us * 1000.0 + 0.5); };
  std::map<std::string, int> json_count;
  std::multiset<std::tuple<std::string, uint64_t, uint64_t>> json_slices, slices;
  for (const auto& e : j["traceEvents"]) {
    json_count[e["ph"].get<std::string>()]++;
    // ac2g flows are on the slices (flow v2: bind_id with flow_out / flow_in), fwdbwd ones s/f.
    json_count["flow_out"] += e.value("flow_out", false) ? 1 : 0;
    json_count["flow_in"] += e.value("flow_in", false) ? 1 : 0;
    if (e["ph"] == "X") {
      const uint64_t ts = base + ns(e["ts"].get<double>());
      json_slices.insert({e["name"].get<std::string>(), ts, ts + ns(e["dur"].get<double>())});
    }
  }
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p));
  std::map<std::string, int> count;
  std::map<uint64_t, std::string> names;
  std::map<std::string, std::vector<std::pair<std::string, uint64_t>>> open;  // track -> stack
  int flows = 0, ends = 0;
  for (const Node* pk : d.packets) {
    if (const Node* in = pk->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) names[U(e->Get("iid"))] = e->Get("name");
    }
    if (const Node* ev = pk->Kid("track_event")) {
      count[ev->Get("type")]++;
      flows += static_cast<int>(ev->All("flow_ids").size());
      ends += static_cast<int>(ev->All("terminating_flow_ids").size());
      auto& stack = open[ev->Get("track_uuid")];
      const uint64_t ts = U(pk->Get("timestamp"));
      if (ev->Get("type") == "TYPE_SLICE_BEGIN") stack.push_back({names[U(ev->Get("name_iid"))], ts});
      if (ev->Get("type") == "TYPE_SLICE_END" && !stack.empty()) {
        slices.insert({stack.back().first, stack.back().second, ts});
        stack.pop_back();
      }
    }
  }
  EXPECT_EQ(slices, json_slices);
  EXPECT_EQ(count["TYPE_SLICE_BEGIN"], json_count["X"]);
  EXPECT_EQ(count["TYPE_SLICE_END"], json_count["X"]);
  EXPECT_EQ(count["TYPE_INSTANT"], json_count["i"]);
  EXPECT_EQ(count["TYPE_COUNTER"], json_count["C"]);
  EXPECT_GT(flows, 0);
  EXPECT_EQ(flows, json_count["s"] + json_count["flow_out"]);
  EXPECT_EQ(ends, json_count["f"] + json_count["flow_in"]);
}

TEST_F(PerfettoTraceTest, LongAndInvalidUtf8NamesStayDecodable) {
  Profile p = SmallProfile();
  const std::string long_name(300, 'k');
  p.ranges.push_back({kT0 + 3'000, kT0 + 4'000, p.strings.Intern(long_name), kMain, 0, 0, 0});
  p.ranges.push_back({kT0 + 5'000, kT0 + 6'000, p.strings.Intern("bad\xff name"), kMain, 0, 0, 0});
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p));
  std::set<std::string> names;
  for (const Node* pk : d.packets) {
    if (const Node* in = pk->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) names.insert(e->Get("name"));
    }
  }
  EXPECT_TRUE(names.count(long_name));
  // protoc prints the repaired U+FFFD (EF BF BD) as octal escapes; the raw 0xff is gone.
  EXPECT_TRUE(names.count("bad357277275 name") || names.count("bad\xEF\xBF\xBD name"));
}

// ---- sampled Python stacks and native stacks ---------------------------------------------------

// A Python program's profile: pid 42, main thread 42 (named "MainThread" by the sampler), one
// synchronize call at 1.5-1.7 ms; and samples every 1 ms of the main thread:
//   0 ms f0 f1 f2, 1 ms f0 f1 f2, 2 ms f0 f1 f3, 3 ms f0 f4   (root first)
// which give (python_slices.h: a slice ends one period after its last sample, or at the cut):
//   f0 [0, 4) 4 samples id 1; f1 [0, 3) 3 samples id 2 (parent 1); f2 [0, 2) id 3 (parent 2);
//   f3 [2, 3) id 4 (parent 2); f4 [3, 4) id 5 (parent 1).
constexpr uint64_t kMs = 1'000'000;
constexpr uint32_t kPyPid = 42;

Profile PythonProfile() {
  Profile p;
  p.info.pid = kPyPid;
  p.info.program = "p.py";
  p.info.start_ns = kT0;
  p.info.end_ns = kT0 + 10 * kMs;
  p.api_names.push_back({165, ApiDomain::kRuntime, 0, p.strings.Intern("cudaDeviceSynchronize")});
  p.api_calls.push_back({kT0 + 3 * kMs / 2, kT0 + 17 * kMs / 10, 7, kPyPid, 165,
                         ApiDomain::kRuntime, 0, 0});
  return p;
}

PythonSamples HandSamples() {
  PythonSamples s;
  s.pid = kPyPid;
  s.program = "p.py";
  s.hz = 1000;
  s.period_ns = kMs;
  s.start_ns = kT0;
  s.threads.push_back({kPyPid, 1, "MainThread"});
  for (uint32_t i = 0; i < 5; ++i) {
    s.frames.push_back({"p.py", "f" + std::to_string(i), i + 1, i + 1});
  }
  s.stacks = {{0, 1, 2}, {0, 1, 3}, {0, 4}};
  s.samples = {{kT0, 0, 0}, {kT0 + kMs, 0, 0}, {kT0 + 2 * kMs, 0, 1}, {kT0 + 3 * kMs, 0, 2}};
  return s;
}

struct DecodedSlice {
  std::string name, category;
  uint64_t ts, end;
  size_t depth;  // on its track
  std::map<std::string, const Node*> args;
};

// Every slice of the decoded trace, per track uuid, paired BEGIN/END as Perfetto reads them (an
// END closes the innermost open slice of its track); fails on an END without a BEGIN.
std::map<uint64_t, std::vector<DecodedSlice>> SlicesByTrack(const Decoded& d) {
  std::map<uint64_t, std::string> names, categories, arg_names;
  std::map<uint64_t, std::vector<DecodedSlice>> open, done;
  for (const Node* pk : d.packets) {
    if (const Node* in = pk->Kid("interned_data")) {
      for (const Node* e : in->Kids("event_names")) names[U(e->Get("iid"))] = e->Get("name");
      for (const Node* e : in->Kids("event_categories")) categories[U(e->Get("iid"))] = e->Get("name");
      for (const Node* e : in->Kids("debug_annotation_names")) arg_names[U(e->Get("iid"))] = e->Get("name");
    }
    const Node* ev = pk->Kid("track_event");
    if (ev == nullptr) continue;
    const uint64_t track = U(ev->Get("track_uuid"));
    const uint64_t ts = U(pk->Get("timestamp"));
    if (ev->Get("type") == "TYPE_SLICE_BEGIN") {
      DecodedSlice s{names[U(ev->Get("name_iid"))], categories[U(ev->Get("category_iids"))], ts,
                     0, open[track].size(), {}};
      for (const Node* a : ev->Kids("debug_annotations")) s.args[arg_names[U(a->Get("name_iid"))]] = a;
      open[track].push_back(std::move(s));
    } else if (ev->Get("type") == "TYPE_SLICE_END") {
      EXPECT_FALSE(open[track].empty()) << "end without a begin on track " << track;
      if (open[track].empty()) continue;
      DecodedSlice s = std::move(open[track].back());
      open[track].pop_back();
      s.end = ts;
      done[track].push_back(std::move(s));
    }
  }
  for (const auto& [track, left] : open) EXPECT_TRUE(left.empty()) << "slice left open on " << track;
  return done;
}

std::map<uint64_t, const Node*> TrackDescriptors(const Decoded& d) {
  std::map<uint64_t, const Node*> tracks;
  for (const Node* p : d.packets) {
    if (const Node* t = p->Kid("track_descriptor")) tracks[U(t->Get("uuid"))] = t;
  }
  return tracks;
}

TEST_F(PerfettoTraceTest, PythonSlicesAreOnTheThreadsSampledTrackNestedWithHandDerivedTimes) {
  const Profile p = PythonProfile();
  const PythonSliceSet set = PythonSlicesFrom(HandSamples(), p.info.start_ns, p.info.end_ns);
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p, &set));
  const std::map<uint64_t, const Node*> tracks = TrackDescriptors(d);
  uint64_t python_track = 0, process_track = 0;
  for (const auto& [uuid, t] : tracks) {
    if (t->Get("name") == "MainThread (thread 42): Python stacks, sampled at 1000 Hz") {
      EXPECT_EQ(python_track, 0u) << "one track per sampled thread";
      python_track = uuid;
    }
    if (t->Kid("process") != nullptr) process_track = uuid;
  }
  ASSERT_NE(python_track, 0u);
  EXPECT_EQ(U(tracks.at(python_track)->Get("parent_uuid")), process_track);
  EXPECT_EQ(tracks.at(python_track)->Kid("thread"), nullptr)
      << "not the thread's own track: sampled slices would partly overlap its exact ones";

  std::map<uint64_t, std::vector<DecodedSlice>> by_track = SlicesByTrack(d);
  std::vector<DecodedSlice>& got = by_track[python_track];
  std::sort(got.begin(), got.end(), [](const DecodedSlice& a, const DecodedSlice& b) {
    return std::tie(a.ts, a.depth) < std::tie(b.ts, b.depth);
  });
  struct Want {
    const char* name;
    uint64_t ts_ms, end_ms;
    size_t depth;
    uint64_t samples, id, parent;  // parent 0: none
  };
  const std::vector<Want> want = {
      {"p.py(1): f0", 0, 4, 0, 4, 1, 0}, {"p.py(2): f1", 0, 3, 1, 3, 2, 1},
      {"p.py(3): f2", 0, 2, 2, 2, 3, 2}, {"p.py(4): f3", 2, 3, 2, 1, 4, 2},
      {"p.py(5): f4", 3, 4, 1, 1, 5, 1}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const DecodedSlice& s = got[i];
    EXPECT_EQ(s.name, want[i].name);
    EXPECT_EQ(s.category, "python_function");
    EXPECT_EQ(s.ts, kT0 + want[i].ts_ms * kMs);
    EXPECT_EQ(s.end, kT0 + want[i].end_ms * kMs);
    EXPECT_EQ(s.depth, want[i].depth);
    ASSERT_TRUE(s.args.count("samples") && s.args.count("Python id") && s.args.count("sampled"));
    EXPECT_EQ(U(s.args.at("samples")->Get("uint_value")), want[i].samples);
    EXPECT_EQ(U(s.args.at("Python id")->Get("uint_value")), want[i].id);
    EXPECT_EQ(s.args.at("sampled")->Get("bool_value"), "true");
    EXPECT_EQ(U(s.args.at("Python thread")->Get("uint_value")), 0u);
    if (want[i].parent == 0) {
      EXPECT_FALSE(s.args.count("Python parent id"));
    } else {
      ASSERT_TRUE(s.args.count("Python parent id"));
      EXPECT_EQ(U(s.args.at("Python parent id")->Get("uint_value")), want[i].parent);
    }
  }
  // The synchronize call stays on the thread's own track, alone.
  size_t api = 0;
  for (const auto& [track, slices] : by_track) {
    for (const DecodedSlice& s : slices) {
      if (s.name != "cudaDeviceSynchronize") continue;
      ++api;
      EXPECT_NE(track, python_track);
      EXPECT_EQ(s.ts, kT0 + 3 * kMs / 2);
    }
  }
  EXPECT_EQ(api, 1u);
}

// The JSON trace and the Perfetto trace of the same samples hold the same python_function
// slices (name, start, end); without samples the Perfetto trace is byte for byte as before.
TEST_F(PerfettoTraceTest, PythonSlicesAreTheJsonTracesSlices) {
  const Profile p = PythonProfile();
  const PythonSliceSet set = PythonSlicesFrom(HandSamples(), p.info.start_ns, p.info.end_ns);
  const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(p, "t", &set));
  const uint64_t base = j["baseTimeNanoseconds"].get<uint64_t>();
  const auto ns = [](double us) { return static_cast<uint64_t>(us * 1000.0 + 0.5); };
  std::multiset<std::tuple<std::string, uint64_t, uint64_t>> json_slices, slices;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") != "python_function") continue;
    const uint64_t ts = base + ns(e["ts"].get<double>());
    json_slices.insert({e["name"].get<std::string>(), ts, ts + ns(e["dur"].get<double>())});
  }
  for (const auto& [track, list] : SlicesByTrack(DecodeTrace(FormatPerfettoTrace(p, &set)))) {
    for (const DecodedSlice& s : list) {
      if (s.category == "python_function") slices.insert({s.name, s.ts, s.end});
    }
  }
  EXPECT_EQ(json_slices.size(), 5u);
  EXPECT_EQ(slices, json_slices);
  EXPECT_EQ(FormatPerfettoTrace(p, nullptr), FormatPerfettoTrace(p));
}

// Two threads sampled at once, each on its own track; slices start in time order across the
// tracks, so the file stays in time order (checked packet by packet).
TEST_F(PerfettoTraceTest, EachSampledThreadHasItsTrackAndPacketsStayInTimeOrder) {
  Profile p = PythonProfile();
  p.threads.push_back({43, p.strings.Intern("loader")});
  PythonSamples s = HandSamples();
  s.threads.push_back({43, 2, "loader"});
  for (uint32_t i = 0; i < 3; ++i) s.samples.push_back({kT0 + kMs / 2 + i * kMs, 1, 2});
  const PythonSliceSet set = PythonSlicesFrom(s, p.info.start_ns, p.info.end_ns);
  const Decoded d = DecodeTrace(FormatPerfettoTrace(p, &set));
  uint64_t last = 0;
  for (const Node* pk : d.packets) {
    if (pk->Kid("track_event") == nullptr) continue;
    EXPECT_GE(U(pk->Get("timestamp")), last);
    last = U(pk->Get("timestamp"));
  }
  std::map<std::string, uint64_t> uuid_of;
  for (const auto& [uuid, t] : TrackDescriptors(d)) uuid_of[t->Get("name")] = uuid;
  ASSERT_TRUE(uuid_of.count("loader: Python stacks, sampled at 1000 Hz"));
  auto by_track = SlicesByTrack(d);
  const auto& loader = by_track[uuid_of["loader: Python stacks, sampled at 1000 Hz"]];
  // 0.5, 1.5, 2.5 ms: f0 f4 -> f0 [0.5, 3.5), f4 [0.5, 3.5).
  ASSERT_EQ(loader.size(), 2u);
  for (const DecodedSlice& sl : loader) {
    EXPECT_EQ(sl.ts, kT0 + kMs / 2);
    EXPECT_EQ(sl.end, kT0 + 7 * kMs / 2);
  }
  EXPECT_EQ(by_track[uuid_of["MainThread (thread 42): Python stacks, sampled at 1000 Hz"]].size(), 5u);
}

// A call with a native stack (--backtrace) carries it as the "stack" annotation: an array of
// the frame strings, innermost first, as args.stack in the JSON; a call without one has none.
TEST_F(PerfettoTraceTest, ApiCallsWithANativeStackCarryItAsAStackAnnotation) {
  Profile p = PythonProfile();
  p.api_calls.push_back({kT0 + 5 * kMs, kT0 + 6 * kMs, 8, kPyPid, 165, ApiDomain::kRuntime, 0, 0});
  p.stacks.push_back({0, 3});
  p.stack_pcs = {0x1111, 0x2222, 0x3333};
  p.api_stacks.push_back({7, 0});
  SymbolizedStacks sym;
  sym.frames = {{"cudaDeviceSynchronize", "middle() (prog.cu:15)", "main (prog.cu:31)"}};
  sym.top_user_frame = {1};
  sym.top_user_function = {"middle()"};
  const auto stacks_of = [](const Decoded& d) {
    std::map<uint64_t, std::vector<std::string>> out;  // correlation -> frames
    for (const auto& [track, list] : SlicesByTrack(d)) {
      for (const DecodedSlice& s : list) {
        if (s.name != "cudaDeviceSynchronize") continue;
        const uint64_t corr = U(s.args.at("correlation")->Get("uint_value"));
        auto& frames = out[corr];
        if (!s.args.count("stack")) continue;
        const Node* n = s.args.at("stack")->Kid("nested_value");
        EXPECT_EQ(n->Get("nested_type"), "ARRAY");
        for (const Node* v : n->Kids("array_values")) frames.push_back(v->Get("string_value"));
      }
    }
    return out;
  };
  auto got = stacks_of(DecodeTrace(FormatPerfettoTrace(p, nullptr, &sym)));
  EXPECT_EQ(got[7], sym.frames[0]);
  EXPECT_TRUE(got.count(8));
  EXPECT_TRUE(got[8].empty()) << "call 8 has no stack";

  // Symbolized by the writer itself (no modules: fallback names), the JSON trace's frames.
  const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(p, "t"));
  std::vector<std::string> json_frames;
  for (const auto& e : j["traceEvents"]) {
    if (e.contains("args") && e["args"].contains("stack")) {
      for (const auto& f : e["args"]["stack"]) json_frames.push_back(f.get<std::string>());
    }
  }
  ASSERT_EQ(json_frames.size(), 3u);
  got = stacks_of(DecodeTrace(FormatPerfettoTrace(p)));
  EXPECT_EQ(got[7], json_frames);
}

// ---- --cpu-sampling's samples: PerfSample packets -------------------------------------------

// SmallProfile plus a module /opt/app/train at [0x400000, 0x500000) (build id "abc" in hex) and
// two stacks (innermost first): 0 = host_preprocess(int) at 0x401010 <- main at 0x400500; 1 =
// cudaLaunchKernel at 0x7f0000001000 (in no module) <- main. Samples, out of time order as the
// queue hands them over: kT0+15 us and kT0+12 us on kMain in stack 0, kT0+61 us on kWorker in
// stack 1, one 5 us before the trace's base time kT0 (left out, as in the JSON trace) and one
// with a stack the names do not have (left out).
// Derived: three PerfSample packets at kT0+12, +15, +61 us (pid kPid, tids kMain, kMain,
// kWorker, user mode); callstacks [main, host_preprocess(int)] twice and [main,
// cudaLaunchKernel], outermost first; 3 frames (main shared), 3 function names, 2 callstacks and
// 2 mappings, each interned once, before its first use; host_preprocess's frame in
// opt/app/train at 0x1010, cudaLaunchKernel's in [unknown] at its PC.
struct SampledProfile {
  Profile p = SmallProfile();
  CpuSampleNames names;
  SampledProfile() {
    p.modules.push_back({p.strings.Intern("/opt/app/train"), p.strings.Intern("616263"), 0,
                         0x400000, 0x500000});
    p.stack_pcs = {0x401010, 0x400500, 0x7f0000001000, 0x400500};
    p.stacks = {{0, 2}, {2, 2}};
    names.function = {"host_preprocess(int)", "cudaLaunchKernel"};
    names.location = {"main.cu:22", ""};
    names.frames_outermost_first = {{"main", "host_preprocess(int)"}, {"main", "cudaLaunchKernel"}};
    p.cpu_samples = {{kT0 + 15'000, kMain, 0, 100'000},
                     {kT0 + 12'000, kMain, 0, 100'000},
                     {kT0 + 61'000, kWorker, 1, 100'000},
                     {kT0 - 5'000, kMain, 0, 100'000},
                     {kT0 + 70'000, kMain, 5, 100'000}};
    p.cpu_sample_counters = {10'000, kCpuSamplesPerf, 5, 0};
  }
};

TEST_F(PerfettoTraceTest, CpuSamplesArePerfSamplesWithInternedCallstacksOnTheirThreads) {
  SampledProfile s;
  const Decoded d = DecodeTrace(FormatPerfettoTrace(s.p, nullptr, nullptr, &s.names));
  std::map<uint64_t, std::string> functions, paths;
  std::map<uint64_t, const Node*> frames, mappings;
  std::map<uint64_t, std::vector<uint64_t>> callstacks;
  std::set<uint64_t> build_ids;
  struct Sample {
    uint64_t ts;
    std::string pid, tid, mode;
    std::vector<std::string> stack;
  };
  std::vector<Sample> samples;
  uint64_t last_ts = 0;
  const auto once = [](auto* table, uint64_t iid, auto value) {
    EXPECT_TRUE(table->emplace(iid, value).second) << "iid " << iid << " interned twice";
  };
  for (const Node* p : d.packets) {
    if (const Node* in = p->Kid("interned_data")) {
      for (const Node* e : in->Kids("function_names")) once(&functions, U(e->Get("iid")), e->Get("str"));
      for (const Node* e : in->Kids("mapping_paths")) once(&paths, U(e->Get("iid")), e->Get("str"));
      for (const Node* e : in->Kids("build_ids")) EXPECT_TRUE(build_ids.insert(U(e->Get("iid"))).second);
      for (const Node* e : in->Kids("mappings")) once(&mappings, U(e->Get("iid")), e);
      for (const Node* e : in->Kids("frames")) once(&frames, U(e->Get("iid")), e);
      for (const Node* e : in->Kids("callstacks")) {
        std::vector<uint64_t> ids;
        for (const std::string& f : e->All("frame_ids")) ids.push_back(U(f));
        once(&callstacks, U(e->Get("iid")), ids);
      }
    }
    if (p->Has("timestamp")) {
      EXPECT_GE(U(p->Get("timestamp")), last_ts) << "packets are written in time order";
      last_ts = U(p->Get("timestamp"));
    }
    const Node* ps = p->Kid("perf_sample");
    if (ps == nullptr) continue;
    EXPECT_EQ(p->Get("sequence_flags"), "2");
    Sample sm{U(p->Get("timestamp")), ps->Get("pid"), ps->Get("tid"), ps->Get("cpu_mode"), {}};
    // Everything it refers to was interned in this packet or before.
    const auto cs = callstacks.find(U(ps->Get("callstack_iid")));
    ASSERT_NE(cs, callstacks.end());
    for (uint64_t f : cs->second) {
      ASSERT_TRUE(frames.count(f));
      const Node* fr = frames.at(f);
      ASSERT_TRUE(functions.count(U(fr->Get("function_name_id"))));
      ASSERT_TRUE(mappings.count(U(fr->Get("mapping_id"))));
      EXPECT_TRUE(build_ids.count(U(mappings.at(U(fr->Get("mapping_id")))->Get("build_id"))));
      sm.stack.push_back(functions.at(U(fr->Get("function_name_id"))));
    }
    samples.push_back(sm);
  }
  ASSERT_EQ(samples.size(), 3u);
  const std::vector<std::string> host = {"main", "host_preprocess(int)"};
  const std::vector<std::string> launch = {"main", "cudaLaunchKernel"};
  const std::string main = std::to_string(kMain), worker = std::to_string(kWorker);
  EXPECT_EQ(samples[0].ts, kT0 + 12'000);
  EXPECT_EQ(samples[1].ts, kT0 + 15'000);
  EXPECT_EQ(samples[2].ts, kT0 + 61'000);
  for (const Sample& sm : samples) {
    EXPECT_EQ(sm.pid, std::to_string(kPid));
    EXPECT_EQ(sm.mode, "MODE_USER");
  }
  EXPECT_EQ(samples[0].tid, main);
  EXPECT_EQ(samples[1].tid, main);
  EXPECT_EQ(samples[2].tid, worker);
  EXPECT_EQ(samples[0].stack, host);
  EXPECT_EQ(samples[1].stack, host);
  EXPECT_EQ(samples[2].stack, launch);
  EXPECT_EQ(frames.size(), 3u);
  EXPECT_EQ(functions.size(), 3u);
  EXPECT_EQ(callstacks.size(), 2u);
  ASSERT_EQ(mappings.size(), 2u);
  // Where each frame is: the module's path components and the PC relative to its start.
  std::map<std::string, std::pair<std::string, uint64_t>> where;
  for (const auto& [iid, fr] : frames) {
    std::string path;
    for (const std::string& c : mappings.at(U(fr->Get("mapping_id")))->All("path_string_ids")) {
      path += (path.empty() ? "" : "/") + paths.at(U(c));
    }
    where[functions.at(U(fr->Get("function_name_id")))] = {path, U(fr->Get("rel_pc"))};
  }
  EXPECT_EQ(where["host_preprocess(int)"], std::make_pair(std::string("opt/app/train"), uint64_t{0x1010}));
  EXPECT_EQ(where["main"], std::make_pair(std::string("opt/app/train"), uint64_t{0x500}));
  EXPECT_EQ(where["cudaLaunchKernel"], std::make_pair(std::string("[unknown]"), uint64_t{0x7f0000001000}));
  for (const auto& [iid, m] : mappings) {
    if (m->All("path_string_ids").size() == 3) {
      EXPECT_EQ(m->Get("start"), std::to_string(0x400000));
      EXPECT_EQ(m->Get("end"), std::to_string(0x500000));
    }
  }
  // The same samples as the JSON trace's cpu_sample instants.
  const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(s.p, "t", nullptr, &s.names));
  std::vector<uint64_t> json_ns;
  for (const auto& e : j.at("traceEvents")) {
    if (e.value("cat", "") == "cpu_sample") {
      json_ns.push_back(static_cast<uint64_t>(e.at("ts").get<double>() * 1000 + 0.5));
    }
  }
  std::sort(json_ns.begin(), json_ns.end());
  EXPECT_EQ(json_ns, (std::vector<uint64_t>{12'000, 15'000, 61'000}));
}

TEST_F(PerfettoTraceTest, WithoutCpuSampleNamesNoPerfSamples) {
  SampledProfile s;
  const Decoded d = DecodeTrace(FormatPerfettoTrace(s.p));
  for (const Node* p : d.packets) EXPECT_EQ(p->Kid("perf_sample"), nullptr);
}

// ---- without protoc ----------------------------------------------------------------------------

TEST(WritePerfettoTrace, FileHasTheSameBytesAsMemoryAndIsDeterministic) {
  const Profile p = SmallProfile();
  const std::string path = ::testing::TempDir() + "/small.pftrace";
  const TraceStats s = WritePerfettoTrace(p, path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  const std::string bytes = FormatPerfettoTrace(p);
  EXPECT_EQ(file.str(), bytes);
  EXPECT_EQ(s.bytes, bytes.size());
  EXPECT_GT(s.events, 0u);
  EXPECT_EQ(FormatPerfettoTrace(p), bytes);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x0a) << "a Trace starts with field 1 (packet)";
}

TEST(WritePerfettoTrace, UnwritablePathThrows) {
  EXPECT_THROW(WritePerfettoTrace(SmallProfile(), "/nonexistent-dir/x.pftrace"), std::runtime_error);
}

// The protobuf trace is under 40 % of the JSON one for plain launches (bench figure 4d: 180 B
// against 552 B per launch, about a third; this small profile's metadata makes it 36 %).
TEST(WritePerfettoTrace, IsUnder40PercentOfTheJsonSize) {
  Profile p = SmallProfile();
  const StringId kernel = p.kernels[0].name;
  for (uint32_t i = 0; i < 2000; ++i) {
    const uint64_t t = kT0 + 1'000'000 + i * 10'000ull;
    p.api_calls.push_back({t, t + 3'000, 1000 + i, kMain, 211, ApiDomain::kRuntime, 0, 0});
    p.kernels.push_back({t + 4'000, t + 9'000, 1000 + i, kernel, 0, 7});
  }
  const size_t json = FormatTraceJson(p, "t").size();
  const size_t pb = FormatPerfettoTrace(p).size();
  EXPECT_LT(pb * 5, json * 2) << "protobuf " << pb << " B, JSON " << json << " B";
}

}  // namespace
}  // namespace gprof
