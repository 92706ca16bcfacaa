#include "collector/windows/kernel_match_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace gprof::collector::windows {
namespace {

TEST(KernelMatchCache, StoredResultIsFoundByContentNotByPointer) {
  auto cache = std::make_unique<KernelMatchCache>();
  char a[] = "_Z4tinyPf";
  char b[] = "_Z4tinyPf";  // same name at another address
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(a)), -1);
  cache->Store(KernelMatchCache::KeyOf(a), true);
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(a)), 1);
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(b)), 1);
}

// CUPTI's symbolName is valid only during the callback: the same buffer may later hold another
// kernel's name. The old pointer-keyed cache answered with the first kernel's result here.
TEST(KernelMatchCache, ReusedNameStorageNeverHitsTheOldName) {
  auto cache = std::make_unique<KernelMatchCache>();
  char storage[64] = "_Z4tinyPf";
  cache->Store(KernelMatchCache::KeyOf(storage), true);
  std::strcpy(storage, "_Z5largePf");
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(storage)), -1);
  cache->Store(KernelMatchCache::KeyOf(storage), false);
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(storage)), 0);
  std::strcpy(storage, "_Z4tinyPf");
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(storage)), 1);
}

TEST(KernelMatchCache, LongNamesDifferingAfterThePrefixAreToldApartByHash) {
  auto cache = std::make_unique<KernelMatchCache>();
  const std::string base(200, 'k');
  const std::string one = base + "_one", two = base + "_two";
  cache->Store(KernelMatchCache::KeyOf(one.c_str()), true);
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(two.c_str())), -1);
  EXPECT_EQ(cache->Lookup(KernelMatchCache::KeyOf(one.c_str())), 1);
}

}  // namespace
}  // namespace gprof::collector::windows
