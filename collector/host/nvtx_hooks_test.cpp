// Unit tests for the NVTX hooks as an NVTX client calls them: InstallNvtxHooks fills a callback
// table handed out by an in-memory export table (what NVTX's injection hands the tool), the test
// calls the filled slots, and BuildHostProfile turns the records into ranges and marks. Checks
// names of every length around the one-pass copy limit and beyond the record limit, attributes
// (category, registered strings, domains), start/end ranges and what the observer sees.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "collector/host/nvtx_hooks.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "collector/host/host_collection.h"
#include "collector/host/host_clock.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"

namespace gprof::collector {
namespace {

// The client side of NVTX's export table: one slot array per module, as nvtxImpl.h keeps them.
NvtxFunctionPointer g_core_slots[NVTX_CBID_CORE_SIZE];
NvtxFunctionPointer* g_core_table[NVTX_CBID_CORE_SIZE];
NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE];
NvtxFunctionPointer* g_core2_table[NVTX_CBID_CORE2_SIZE];

int NVTX_API GetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out,
                                    unsigned int* size) {
  if (module == NVTX_CB_MODULE_CORE) {
    for (unsigned i = 0; i < NVTX_CBID_CORE_SIZE; ++i) g_core_table[i] = &g_core_slots[i];
    *out = g_core_table;
    *size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    for (unsigned i = 0; i < NVTX_CBID_CORE2_SIZE; ++i) g_core2_table[i] = &g_core2_slots[i];
    *out = g_core2_table;
    *size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}

const NvtxExportTableCallbacks kCallbacks{sizeof(NvtxExportTableCallbacks),
                                          &GetModuleFunctionTable};

const void* GetExportTable(uint32_t id) {
  return id == NVTX_ETID_CALLBACKS ? &kCallbacks : nullptr;
}

template <typename Fn>
Fn Core(unsigned id) {
  return reinterpret_cast<Fn>(g_core_slots[id]);
}
template <typename Fn>
Fn Core2(unsigned id) {
  return reinterpret_cast<Fn>(g_core2_slots[id]);
}

struct Observed {
  std::vector<std::string> names;
  std::vector<uint64_t> ts;
};
Observed g_observed;  // written by the observer on the test's writer thread only

void Observe(NvtxEventKind kind, uint16_t, const char* name, uint32_t len, uint64_t ts,
             uint64_t) {
  if (kind == NvtxEventKind::kPush) g_observed.names.emplace_back(name, len);
  g_observed.ts.push_back(ts);
}

class NvtxHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitThreadBuffers(4 << 20));  // once per process; later calls keep the arena
    ResetHostRecords();                       // records of earlier tests in this process
    ASSERT_TRUE(InstallNvtxHooks(&GetExportTable));
    SetHostCollectionEnabled(true);
  }
  void TearDown() override {
    SetHostCollectionEnabled(false);
    SetNvtxObserver(nullptr);
  }
  // Runs `body` on a fresh thread (each arena belongs to the threads that first wrote to it),
  // then builds the profile.
  template <typename Body>
  Profile Record(Body body) {
    std::thread(body).join();
    Profile p;
    BuildHostProfile(&p, NowNs());
    return p;
  }
  static std::string Name(const Profile& p, StringId id) { return std::string(p.strings.Get(id)); }
};

TEST_F(NvtxHooks, PushPopNamesOfEveryLengthRoundTrip) {
  // Around the one-pass copy (48 bytes), far beyond it, and beyond what one record holds.
  const std::vector<size_t> lengths = {0, 1, 7, 47, 48, 49, 200, 991, 992, 993, 5000};
  const uint64_t before = NowNs();
  const Profile p = Record([&] {
    auto push = Core<int(NVTX_API*)(const char*)>(NVTX_CBID_CORE_RangePushA);
    auto pop = Core<int(NVTX_API*)()>(NVTX_CBID_CORE_RangePop);
    for (size_t len : lengths) {
      const std::string name(len, static_cast<char>('a' + len % 26));
      push(name.c_str());
      pop();
    }
  });
  const uint64_t after = NowNs();
  ASSERT_EQ(p.ranges.size(), lengths.size());
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
  for (size_t i = 0; i < lengths.size(); ++i) {
    const HostRange& r = p.ranges[i];
    const size_t kept = std::min<size_t>(lengths[i], kMaxHostPayload - 32);  // long names are cut
    EXPECT_EQ(Name(p, r.name), std::string(kept, static_cast<char>('a' + lengths[i] % 26)))
        << "name of " << lengths[i] << " bytes";
    EXPECT_LE(r.start_ns, r.end_ns);
    // Stamps are CLOCK_REALTIME ns (small slack for the clock map, host_clock.h).
    EXPECT_GE(r.start_ns + 50'000, before);
    EXPECT_LE(r.end_ns, after + 50'000);
    if (i > 0) {
      EXPECT_GE(r.start_ns, p.ranges[i - 1].end_ns);
    }
  }
}

TEST_F(NvtxHooks, AttributesDomainsAndStartEndRanges) {
  auto domain_create = Core2<nvtxDomainHandle_t(NVTX_API*)(const char*)>(
      NVTX_CBID_CORE2_DomainCreateA);
  auto register_string = Core2<nvtxStringHandle_t(NVTX_API*)(nvtxDomainHandle_t, const char*)>(
      NVTX_CBID_CORE2_DomainRegisterStringA);
  const nvtxDomainHandle_t domain = domain_create("hooks-test-domain");
  const nvtxStringHandle_t registered = register_string(domain, "registered name");
  ASSERT_NE(domain, nullptr);
  ASSERT_NE(registered, nullptr);
  const Profile p = Record([&] {
    auto push_ex = Core2<int(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(
        NVTX_CBID_CORE2_DomainRangePushEx);
    auto pop = Core2<int(NVTX_API*)(nvtxDomainHandle_t)>(NVTX_CBID_CORE2_DomainRangePop);
    auto start = Core<nvtxRangeId_t(NVTX_API*)(const char*)>(NVTX_CBID_CORE_RangeStartA);
    auto end = Core<void(NVTX_API*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
    auto mark_w = Core<void(NVTX_API*)(const wchar_t*)>(NVTX_CBID_CORE_MarkW);
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = 3;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = registered;
    const nvtxRangeId_t id = start("async");
    push_ex(domain, &a);
    a.category = 0;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "plain in domain";
    push_ex(domain, &a);
    pop(domain);
    pop(domain);
    mark_w(L"wide mark");
    end(id);
  });
  ASSERT_EQ(p.ranges.size(), 3u);
  ASSERT_EQ(p.marks.size(), 1u);
  EXPECT_EQ(Name(p, p.marks[0].name), "wide mark");
  const HostRange* async = nullptr;
  const HostRange* reg = nullptr;
  const HostRange* plain = nullptr;
  for (const HostRange& r : p.ranges) {
    const std::string n = Name(p, r.name);
    if (n == "async") async = &r;
    if (n == "registered name") reg = &r;
    if (n == "plain in domain") plain = &r;
  }
  ASSERT_TRUE(async && reg && plain);
  EXPECT_TRUE(async->flags & kRangeStartEnd);
  EXPECT_EQ(reg->category, 3u);
  EXPECT_EQ(plain->category, 0u);
  EXPECT_EQ(Name(p, p.domains[reg->domain]), "hooks-test-domain");
  EXPECT_EQ(reg->domain, plain->domain);
  EXPECT_LE(reg->start_ns, plain->start_ns);
  EXPECT_GE(reg->end_ns, plain->end_ns);
  EXPECT_LE(async->start_ns, reg->start_ns);
  EXPECT_GE(async->end_ns, reg->end_ns);
}

TEST_F(NvtxHooks, ObserverSeesNamesAndTheStampsTheProfileGets) {
  g_observed = {};
  SetNvtxObserver(&Observe);
  const Profile p = Record([] {
    auto push = Core<int(NVTX_API*)(const char*)>(NVTX_CBID_CORE_RangePushA);
    auto pop = Core<int(NVTX_API*)()>(NVTX_CBID_CORE_RangePop);
    push("ProfilerStep#1");
    pop();
    push(std::string(100, 's').c_str());
    pop();
  });
  ASSERT_EQ(g_observed.names.size(), 2u);
  EXPECT_EQ(g_observed.names[0], "ProfilerStep#1");
  EXPECT_EQ(g_observed.names[1], std::string(100, 's'));
  // A window cut at an observed stamp must keep that very record: same ns both ways.
  ASSERT_EQ(p.ranges.size(), 2u);
  ASSERT_EQ(g_observed.ts.size(), 4u);
  EXPECT_EQ(p.ranges[0].start_ns, g_observed.ts[0]);
  EXPECT_EQ(p.ranges[0].end_ns, g_observed.ts[1]);
  EXPECT_EQ(p.ranges[1].start_ns, g_observed.ts[2]);
  EXPECT_EQ(p.ranges[1].end_ns, g_observed.ts[3]);
}

}  // namespace
}  // namespace gprof::collector
