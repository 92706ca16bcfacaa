// Kernel-name regex results for kernel:REGEX step sources, cached so that std::regex runs once per
// distinct kernel, not once per launch.
//
// Keyed by the name's content, never by the pointer: CUpti_CallbackData::symbolName is only
// guaranteed during the callback (cupti_callbacks.h documents the callback data as valid only for
// the duration of the callback), so CUPTI may hand the same address to another kernel's name
// later. A hit needs the same 64-bit hash of the whole name, the same length and the same first
// kPrefix bytes: a stale pointer to a different name practically never matches (that needs a
// 64-bit hash collision between two names of equal length and prefix).
//
// Cost per launch: one strlen and one pass over the name eight bytes at a time (about 0.2 ns a
// byte: a 1 KiB template-heavy kernel name costs some 200 ns, a typical one 20 ns).
//
// Threads: Lookup and Store run on application threads inside CUPTI callbacks: lock-free, no
// allocation (hot-path rules). Slots are claimed with one CAS and published with a release store.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

namespace gprof::collector::windows {

class KernelMatchCache {
 public:
  static constexpr uint32_t kSlots = 4096;  // power of two
  static constexpr uint32_t kPrefix = 48;   // bytes of the name kept for the confirmation

  // The name's identity, computed once per launch (one pass over the name).
  struct Key {
    uint64_t hash;
    uint32_t length;
    const char* name;
  };
  static Key KeyOf(const char* name) {
    const size_t n = std::strlen(name);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {  // word at a time (multiply-rotate mixing)
      uint64_t w;
      std::memcpy(&w, name + i, 8);
      h = (h ^ (w * 0x87c37b91114253d5ull)) * 0x4cf5ad432745937full;
      h = (h << 31) | (h >> 33);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, name + i, n - i);
    h = (h ^ (tail * 0x87c37b91114253d5ull)) * 0x4cf5ad432745937full;
    h ^= h >> 29;
    const uint32_t length = n > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(n);
    return {h == 0 ? 1 : h, length, name};  // 0 marks an empty slot
  }

  // 1 = matches, 0 = does not, -1 = not known yet (run the regex, then Store).
  int Lookup(const Key& k) const {
    for (uint32_t i = 0; i < kProbes; ++i) {
      const Slot& s = slots_[(k.hash + i) & (kSlots - 1)];
      const uint64_t key = s.hash.load(std::memory_order_acquire);
      if (key == 0) return -1;
      if (key != k.hash) continue;
      const int state = s.state.load(std::memory_order_acquire);
      if (state == kPending) return -1;
      if (!Same(s, k)) continue;  // same hash, another name: keep probing
      return state == kMatch ? 1 : 0;
    }
    return -1;
  }

  // Claims a free slot for the name and publishes the result there. A slot holding another name
  // is never written; a full probe window just means the regex runs again next time.
  void Store(const Key& k, bool match) {
    for (uint32_t i = 0; i < kProbes; ++i) {
      Slot& s = slots_[(k.hash + i) & (kSlots - 1)];
      uint64_t expected = 0;
      if (s.hash.compare_exchange_strong(expected, k.hash, std::memory_order_acq_rel)) {
        s.length = k.length;
        std::memcpy(s.prefix, k.name, k.length < kPrefix ? k.length : kPrefix);
        s.state.store(match ? kMatch : kNoMatch, std::memory_order_release);
        return;
      }
      if (expected == k.hash && s.state.load(std::memory_order_acquire) != kPending && Same(s, k)) {
        return;  // already stored (by another thread)
      }
    }
  }

 private:
  static constexpr uint32_t kProbes = 8;
  enum : int { kPending = 0, kNoMatch = 1, kMatch = 2 };
  struct Slot {
    std::atomic<uint64_t> hash{0};
    std::atomic<int> state{kPending};  // published after length and prefix are written
    uint32_t length = 0;
    char prefix[kPrefix] = {};
  };
  static bool Same(const Slot& s, const Key& k) {
    return s.length == k.length &&
           std::memcmp(s.prefix, k.name, k.length < kPrefix ? k.length : kPrefix) == 0;
  }
  Slot slots_[kSlots];
};

}  // namespace gprof::collector::windows
