// See window_gpu.h. Cold code; exceptions are caught by the callers' entry points (and here in
// HeldWindowsTick, which the window thread calls directly).
#include "collector/lifecycle/window_gpu.h"

#include <deque>
#include <thread>
#include <type_traits>
#include <utility>

#include "collector/cupti/gpu_collector.h"
#include "collector/lifecycle/flush.h"
#include "collector/lifecycle/runtime_state.h"
#include "collector/windows/window_cut.h"
#include "collector/windows/window_thread.h"
#include "model/gpu_checks.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {
namespace {

struct HeldWindow {
  Profile profile;
  std::string path;
  std::unordered_set<uint32_t> calls;    // every call id of the window
  std::unordered_set<uint32_t> waiting;  // awaited ids still without a record
  std::chrono::steady_clock::time_point write_by;  // control captures: written by then at most
};

std::deque<HeldWindow> g_held;  // flush_mutex held; oldest first
WindowFileWriter g_write = nullptr;
std::atomic<size_t> g_held_count{0};

void EraseArrived(const Profile& p, std::unordered_set<uint32_t>* waiting) {
  ForEachGpuKind(p, [&](GpuKind, const auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    if constexpr (kGpuRecordHasCorrelation<T>) {
      for (const T& r : records) waiting->erase(r.correlation_id);
    }
  });
}

void WriteFinished(HeldWindow& h) {
  CheckGpuAgainstCalls(&h.profile);
  const bool ok = g_write != nullptr && g_write(h.profile, h.path);
  // Its client (a control capture's) hears of it now: the window thread left it untold.
  NotifyWindowSaved(h.profile.info.cycle, ok ? h.path : std::string(),
                    h.profile.info.partial_window);
}

// Moves the late records in `gpu_pending` into the held windows; writes those now complete
// (all of them when `all`, oldest first).
void Distribute(Profile* gpu_pending, bool all) {
  for (HeldWindow& h : g_held) {
    for (uint32_t id : MoveGpuRecordsOf(h.calls, gpu_pending, &h.profile)) h.waiting.erase(id);
  }
  const auto now = std::chrono::steady_clock::now();
  while (!g_held.empty() && (all || g_held.front().waiting.empty() ||
                             g_held.size() > kMaxHeldWindows || now >= g_held.front().write_by)) {
    HeldWindow& h = g_held.front();
    if (!h.waiting.empty()) {
      log::Info(std::to_string(h.waiting.size()) + " GPU calls of " + h.path +
                " never got a GPU record (counted as launches without records)");
    }
    if (all && g_held.size() == 1) {
      // The exit's last drain: what it counted (incomplete records, drops) goes to the last one.
      AddCounters(&h.profile.counters, gpu_pending->counters);
      gpu_pending->counters = Counters{};
    }
    WriteFinished(h);
    g_held.pop_front();
  }
  g_held_count.store(g_held.size(), std::memory_order_release);
}

bool AnyWaiting() {
  for (const HeldWindow& h : g_held) {
    if (!h.waiting.empty()) return true;
  }
  return false;
}

}  // namespace

std::unordered_set<uint32_t> AwaitedGpuCalls(const Profile& p, uint64_t start_ns,
                                             uint64_t end_ns) {
  std::unordered_set<uint32_t> waiting;
  const std::vector<bool> captured = CapturedCalls(p);
  for (size_t i = 0; i < p.api_calls.size(); ++i) {
    const ApiCall& c = p.api_calls[i];
    if (c.start_ns < start_ns || c.start_ns >= end_ns || captured[i] || IsGraphLaunchCall(c)) {
      continue;
    }
    if (CallMakesGpuWork(c)) waiting.insert(c.correlation_id);
  }
  EraseArrived(p, &waiting);
  return waiting;
}

void DrainGpuAtExit(Profile* p) {
  // Records drained into `p` itself count as arrived; the profile's calls are all awaited.
  std::unordered_set<uint32_t> waiting = AwaitedGpuCalls(*p, 0, UINT64_MAX);
  const auto deadline = std::chrono::steady_clock::now() + kExitGpuWait;
  for (;;) {
    DrainGpu(p, /*forced=*/false);
    EraseArrived(*p, &waiting);
    if (waiting.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Always once forced, our kinds already off (flush.h DrainGpuForExit): what nothing awaited
  // (graph replays, copies that move nothing) may still be in CUPTI's buffers, and the session's
  // Stop flushes only to end it, into a batch that no drain reads.
  DrainGpu(p, /*forced=*/true);
}

void CollectWindowGpu(Profile* window, Profile* gpu_pending) {
  DrainGpuBounded(gpu_pending, /*forced=*/false);
  Distribute(gpu_pending, /*all=*/false);
  MoveGpuRecords(gpu_pending, window);
}

WindowSave SaveOrHoldWindow(Profile&& window, const std::string& path, bool control,
                            Profile* gpu_pending, WindowFileWriter write) {
  g_write = write;
  const auto now = std::chrono::steady_clock::now();
  HeldWindow h{std::move(window), path, {}, {},
               control ? now + kControlHoldMax : std::chrono::steady_clock::time_point::max()};
  h.waiting = AwaitedGpuCalls(h.profile, 0, UINT64_MAX);  // the profile is cut already
  for (const ApiCall& c : h.profile.api_calls) h.calls.insert(c.correlation_id);
  // Short wait: a GPU that has nearly caught up gets the window written at once. After a signal
  // the exit's one bounded drain (HeldWindowsTick) serves every window instead.
  const auto deadline = InSignalFlush() ? now : now + kWindowGpuWait;
  while (!h.waiting.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    DrainGpuBounded(gpu_pending, /*forced=*/false);
    Distribute(gpu_pending, /*all=*/false);
    for (uint32_t id : MoveGpuRecordsOf(h.calls, gpu_pending, &h.profile)) h.waiting.erase(id);
  }
  if (h.waiting.empty()) {
    CheckGpuAgainstCalls(&h.profile);
    return write(h.profile, path) ? WindowSave::kWritten : WindowSave::kFailed;
  }
  g_held.push_back(std::move(h));
  g_held_count.store(g_held.size(), std::memory_order_release);
  SetHeldWindowsHook(&HeldWindowsTick);
  if (FlushState() > 0) return WindowSave::kHeld;  // exit: FinishWindows calls the exiting tick
  Distribute(gpu_pending, /*all=*/false);  // over kMaxHeldWindows: the oldest is written
  return WindowSave::kHeld;
}

void HeldWindowsTick(Profile* gpu_pending, bool exiting) noexcept {
  try {
    if (g_held_count.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> lock(g_rt->flush_mutex);
    if (g_gpu_state.load(std::memory_order_acquire) != kGpuStarted || GpuAbandoned()) {
      Distribute(gpu_pending, /*all=*/true);
      return;
    }
    if (exiting && InSignalFlush()) {
      // Host data first: every held window is written after one forced drain that CUPTI gets
      // only until the signal's deadline (the signalled thread may hold a CUPTI lock).
      DrainGpuBounded(gpu_pending, /*forced=*/true, /*stop_activity=*/true);
      Distribute(gpu_pending, /*all=*/true);
      return;
    }
    // What is already in `gpu_pending` is handed out on every call (the window thread's discard
    // would drop late records by their time); CUPTI is flushed at most every 10 ms.
    static std::chrono::steady_clock::time_point last{};  // flush_mutex held
    const auto now = std::chrono::steady_clock::now();
    if (exiting || now - last >= std::chrono::milliseconds(10)) {
      last = now;
      DrainGpuBounded(gpu_pending, /*forced=*/false);
    }
    Distribute(gpu_pending, /*all=*/false);
    if (!exiting) return;
    const auto deadline = now + kExitGpuWait;
    while (AnyWaiting() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      DrainGpu(gpu_pending, /*forced=*/false);
      Distribute(gpu_pending, /*all=*/false);
    }
    if (AnyWaiting()) DrainGpu(gpu_pending, /*forced=*/true);
    Distribute(gpu_pending, /*all=*/true);
  } catch (const std::exception& e) {
    log::Error(std::string("writing a held window failed: ") + e.what());
  } catch (...) {
    log::Error("writing a held window failed");
  }
}

}  // namespace gprof::collector::lifecycle
