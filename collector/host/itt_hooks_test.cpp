// ITT collector side: the API table filled the way ITT's static part lays it out
// (ittnotify_config.h), string handles cached per text, and handles the static part made itself.
#include "collector/host/itt_hooks.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <string>

namespace gprof::collector {
namespace {

// A stand-in for ITT's __itt_global prefix with a three-entry API table.
struct FakeGlobal {
  unsigned char magic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};
  unsigned long version[3] = {3, 0, 0};
  long counters[3] = {0, 0, 0};
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  void* lib = nullptr;
  void* error_handler = nullptr;
  const char** dll_path = nullptr;
  IttApiInfo* api_list = nullptr;
};

int g_null_task_begin, g_null_other, g_ours;

TEST(IttHooks, FillsOurEntriesAndGivesTheRestTheirNullImplementation) {
  void* task_begin = nullptr;
  void* other = nullptr;
  IttApiInfo list[] = {{"__itt_task_begin", &task_begin, nullptr, &g_null_task_begin, 0},
                       {"__itt_frame_begin_v3", &other, nullptr, &g_null_other, 0},
                       {nullptr, nullptr, nullptr, nullptr, 0}};
  FakeGlobal g;
  g.api_list = list;
  const char* names[] = {"__itt_task_begin"};
  void* functions[] = {&g_ours};
  ASSERT_TRUE(FillIttApi(&g, names, functions, 1));
  EXPECT_EQ(task_begin, &g_ours);
  EXPECT_EQ(other, &g_null_other);

  // Not ITT's global: left alone.
  FakeGlobal bad = g;
  bad.magic[0] = 0;
  task_begin = nullptr;
  EXPECT_FALSE(FillIttApi(&bad, names, functions, 1));
  EXPECT_EQ(task_begin, nullptr);
}

TEST(IttHooks, OneHandlePerTextWhateverThePointer) {
  const std::string a = "aten::mm", b = "aten::mm", c = "aten::add";
  const void* ha = IttStringHandle(a.c_str());
  ASSERT_NE(ha, nullptr);
  EXPECT_EQ(IttStringHandle(a.c_str()), ha);  // cached
  EXPECT_EQ(IttStringHandle(b.c_str()), ha);  // same text, other storage
  EXPECT_NE(IttStringHandle(c.c_str()), ha);
  EXPECT_EQ(IttEntryOf(ha)->text, "aten::mm");
  // Storage reused for another name (a user scope's std::string): the cache notices.
  std::string reused = "region_one";
  const void* h1 = IttStringHandle(reused.c_str());
  reused.replace(0, reused.size(), "region_two");
  const void* h2 = IttStringHandle(reused.c_str());
  EXPECT_NE(h1, h2);
  EXPECT_EQ(IttEntryOf(h2)->text, "region_two");
  EXPECT_EQ(IttStringHandle(nullptr), nullptr);
  EXPECT_EQ(IttEntryOf(nullptr), nullptr);
}

// The static part's own __itt_string_handle: {strA, strW, extra1, extra2, next}.
TEST(IttHooks, HandlesMadeByTheStaticPartAreResolvedByName) {
  struct StaticHandle {
    const char* strA;
    const void* strW;
    int extra1;
    void* extra2;
    void* next;
  } foreign{"aten::linear", nullptr, 0, nullptr, nullptr};
  const NvtxStringEntry* e = IttEntryOf(&foreign);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->text, "aten::linear");
  EXPECT_EQ(e, IttEntryOf(IttStringHandle("aten::linear")));
}

// Only PyTorch's ITT domain makes op ranges; another runtime's domain (here "OpenMP") does not.
TEST(IttHooks, OnlyPyTorchsDomainIsTorch) {
  struct Domain {  // ittnotify.h's __itt_domain
    volatile int flags;
    const char* nameA;
    void* nameW;
    int extra1;
    void* extra2;
    void* next;
  };
  Domain torch{1, "PyTorch", nullptr, 0, nullptr, nullptr};
  Domain openmp{1, "OpenMP", nullptr, 0, nullptr, nullptr};
  Domain unnamed{1, nullptr, nullptr, 0, nullptr, nullptr};
  EXPECT_TRUE(IttIsTorchDomain(&torch));
  EXPECT_TRUE(IttIsTorchDomain(&torch));  // cached
  EXPECT_FALSE(IttIsTorchDomain(&openmp));
  EXPECT_FALSE(IttIsTorchDomain(&unnamed));
  EXPECT_FALSE(IttIsTorchDomain(nullptr));
}

}  // namespace
}  // namespace gprof::collector
