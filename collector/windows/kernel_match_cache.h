// Kernel-name regex results for kernel:REGEX step sources, cached so that std::regex runs once per
// distinct kernel, not once per launch.
//
// Keyed by the name's content, never by the pointer: CUpti_CallbackData::symbolName is only
// guaranteed during the callback (cupti_callbacks.h documents the callback data as valid only for
// the duration of the callback), so CUPTI may hand the same address to another kernel's name
// later. A hit needs the same 64-bit FNV-1a hash, the same length and the same first kPrefix
// bytes: a stale pointer to a different name can never match.
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
    uint64_t h = 14695981039346656037ull;  // FNV-1a 64
    uint32_t n = 0;
    for (const char* p = name; *p != '\0'; ++p, ++n) {
      h ^= static_cast<unsigned char>(*p);
      h *= 1099511628211ull;
    }
    return {h == 0 ? 1 : h, n, name};  // 0 marks an empty slot
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
