// The "is host collection on?" switch: one relaxed atomic that every hook loads first. The runtime
// turns it on at init and off at exit or in a forked child; schedule windows may flip it too.
//
// Threads: read on every application thread (hot path: one relaxed load, nothing else); written
// by cold code only (init, exit, window thread, the pthread_atfork child handler).
#pragma once

#include <atomic>

namespace gprof::collector {

// Constant-initialized: no global constructor runs for it (the library may be preloaded).
inline std::atomic<bool> g_host_collection_enabled{false};

inline bool HostCollectionEnabled() {
  return g_host_collection_enabled.load(std::memory_order_relaxed);
}
inline void SetHostCollectionEnabled(bool enabled) {
  g_host_collection_enabled.store(enabled, std::memory_order_relaxed);
}

}  // namespace gprof::collector

namespace gprof::collector {

// Set for good in a child that forked without exec (pthread_atfork child handler) or after an
// init failure: hooks then do nothing and cold paths take no lock (a parent thread may have held
// it at fork time).
inline std::atomic<bool> g_host_inert{false};

inline bool HostInert() { return g_host_inert.load(std::memory_order_relaxed); }

}  // namespace gprof::collector
