// See spill.h. Rules: cold code; every entry point catches (a failed segment is logged, never
// thrown into the program). Nothing here is freed: the state outlives atexit handlers of other
// libraries, and a forked child (inert) must not remove the parent's temporary file.
#include "collector/lifecycle/spill.h"

#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "collector/cupti/gpu_collector.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"
#include "collector/lifecycle/flush.h"
#include "collector/lifecycle/process_identity.h"
#include "collector/lifecycle/signals.h"
#include "collector/lifecycle/thread_cpu.h"
#include "collector/lifecycle/window_gpu.h"
#include "model/dump.h"
#include "model/gpu_checks.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {
namespace {

struct Spill {
  explicit Spill(Runtime* r) : rt(r), host(&run) {}
  Runtime* rt;
  Profile run;  // the run's tables, and the records since the last segment
  HostSegments host;
  SegmentedDumpWriter writer;
  bool opened = false;
  bool failed = false;  // a segment could not be written: the thread stops spilling
  uint64_t last_ns = 0;
  std::mutex mu;  // guards `stop` for the condition variable
  std::condition_variable cv;
  bool stop = false;
  std::atomic<bool> exited{false};  // ThreadMain has returned (or is about to)
  std::thread thread;
};

std::atomic<Spill*> g_spill{nullptr};

// Everything but the run's tables: they stay, so that ids in later segments mean the same.
void ClearRecords(Profile* p) {
  p->ranges.clear();
  p->marks.clear();
  p->api_calls.clear();
  p->steps.clear();
  p->thread_cpu.clear();
  p->api_stacks.clear();
  ForEachGpuKind(*p, [](GpuKind, auto& records) { records.clear(); });
  p->counters = Counters{};
  p->collector_cost = CollectorCost{};
  p->stack_counters = StackCounters{};
  p->cpu_samples.clear();
  p->cpu_sample_counters = CpuSampleCounters{};
}

// What is held for records not yet written, once per segment (GPROF_LOG_LEVEL=debug): where a
// program's memory goes when its host runs ahead of the GPU.
void LogPendingMemory(const char* when) {
  if (!log::Enabled(LogLevel::kDebug)) return;
  const GpuPendingMemory g = PendingGpuMemory();
  const struct mallinfo2 heap = mallinfo2();
  constexpr double kMiB = 1 << 20;
  char line[320];
  std::snprintf(line, sizeof line,
                "pending memory %s: CUPTI buffers mapped %.1f MiB (%u lent to CUPTI, %u completed "
                "not decoded), decoded GPU records %.1f MiB (peak %.1f), host buffer touched "
                "%.1f MiB, malloc in use %.1f MiB",
                when, static_cast<double>(g.pool_mapped_bytes) / kMiB, g.buffers_lent,
                g.buffers_completed, static_cast<double>(g.decoded_bytes) / kMiB,
                static_cast<double>(g.decoded_bytes_peak) / kMiB,
                static_cast<double>(HostArenaBytesTouched()) / kMiB,
                static_cast<double>(heap.uordblks + heap.hblkhd) / kMiB);
  log::Debug(line);
}

// One segment; flush_mutex held.
void WriteSegment(Spill* s, bool last, uint64_t end_ns) {
  Runtime& rt = *s->rt;
  Profile& run = s->run;
  run.info = rt.info;
  run.info.end_ns = end_ns;
  StampClockEnd(&run.info);
  s->host.Build(last, end_ns);
  TakeThreadCpu(&run, /*consume=*/true);  // with a round now: the segment's (or run's) end
  MarkLaunchCalls(&run, &HandedOverAt);
  LogPendingMemory(last ? "at exit" : "before a segment");
  if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) {
    SetGpuInfo(rt.gpu, &run.info);
    AddGpuApiNames(&run);  // host data first: the calls' names, should CUPTI not answer
    // Mid-run: only buffers whose records are all complete. The last polls, then forces
    // (DrainGpuForExit).
    if (last) {
      DrainGpuForExit(&run);
    } else {
      DrainGpu(&run, /*forced=*/false);
    }
  } else if (!rt.config.cuda) {
    run.info.gpu_status = "off: GPROF_CUDA=0";
  }
  // A run of one segment is checked here, as ever; the reader checks a run of several whole.
  if (last && s->writer.segments() == 0) CheckGpuAgainstCalls(&run);
  const std::string path = WholeRunDumpPath(rt.config.output_dir, rt.info);
  std::string error;
  if (!s->opened) {
    error = s->writer.Open(path);
    s->opened = error.empty();
  }
  if (error.empty()) error = s->writer.Append(run, last);
  if (error.empty() && last) error = s->writer.Publish();
  if (error.empty()) {
    NoteDumpWritten(run, last ? path : s->writer.temp_path());
  } else if (s->writer.segments() == 0) {
    s->failed = true;
    s->writer.Discard();  // nothing of the run in it: leave no partial file
    log::Warn(error + "; no profile was written for pid " + std::to_string(rt.info.pid) + " (" +
              path + "). Set GPROF_OUTPUT_DIR to a writable directory of your own.");
  } else {
    s->failed = true;  // the segments written stay: the launcher reads them as incomplete
    log::Warn(error + "; the profile of pid " + std::to_string(rt.info.pid) + " stops after " +
              std::to_string(s->writer.segments()) + " segments, left in " +
              s->writer.temp_path() + " (gprof-run reads it as an incomplete dump). Set " +
              "GPROF_OUTPUT_DIR to a writable directory of your own.");
  }
  ClearRecords(&run);
}

bool SegmentDue(const Spill& s, uint64_t now) {
  const uint64_t every = uint64_t{s.rt->config.segment_seconds} * 1'000'000'000;
  return now - s.last_ns >= every || HostBufferFill() >= kSpillHostFill ||
         PendingGpuBytes() >= kSpillGpuBytes;
}

void ThreadMain(Spill* s) {
  struct MarkExited {
    Spill* s;
    ~MarkExited() { s->exited.store(true, std::memory_order_release); }
  } mark{s};
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(s->mu);
        s->cv.wait_for(lock, std::chrono::milliseconds(50), [s] { return s->stop; });
        if (s->stop) return;
      }
      const uint64_t now = NowNs();
      if (!SegmentDue(*s, now)) continue;
      std::lock_guard<std::mutex> lock(s->rt->flush_mutex);
      if (FlushState() != kFlushNone) return;  // the exit flush writes the last one
      WriteSegment(s, /*last=*/false, now);
      s->last_ns = now;
      if (s->failed) return;
    }
  } catch (const std::exception& e) {
    log::Error(std::string("writing a profile segment failed: ") + e.what() +
               "; the rest of the run is written at exit");
  } catch (...) {
    log::Error("writing a profile segment failed; the rest of the run is written at exit");
  }
}

}  // namespace

bool StartSpill(Runtime& rt) {
  if (rt.config.segment_seconds == 0 || g_spill.load(std::memory_order_acquire) != nullptr) {
    return false;
  }
  try {
    auto* s = new Spill(&rt);
    s->last_ns = rt.info.start_ns;
    WithFlushSignalsBlocked([&] {
      s->thread = std::thread(ThreadMain, s);
      return 0;
    });
    g_spill.store(s, std::memory_order_release);
    return true;
  } catch (const std::exception& e) {
    log::Warn(std::string("the segment writer could not start (") + e.what() +
              "); the profile is written at exit in one piece");
    return false;
  }
}

bool SpillActive() { return g_spill.load(std::memory_order_acquire) != nullptr; }

bool StopSpillThread(int wait_ms) {
  Spill* s = g_spill.load(std::memory_order_acquire);
  if (s == nullptr) return true;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stop = true;
  }
  s->cv.notify_all();
  if (!s->thread.joinable() || s->thread.get_id() == std::this_thread::get_id()) return true;
  for (int i = 0; wait_ms >= 0 && !s->exited.load(std::memory_order_acquire); ++i) {
    if (i >= wait_ms) {
      s->thread.detach();  // inside a segment's drain, holding flush_mutex
      log::Warn("the segment writer did not stop within " + std::to_string(wait_ms) +
                " ms of the signal (waiting inside CUPTI?): the profile keeps the segments "
                "written so far");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s->thread.join();
  return true;
}

void FinishSpill(uint64_t end_ns) {
  Spill* s = g_spill.load(std::memory_order_acquire);
  if (s == nullptr || s->failed) return;  // a failed segment was reported when it failed
  try {
    WriteSegment(s, /*last=*/true, end_ns);
  } catch (const std::exception& e) {
    log::Error(std::string("writing the profile's last segment failed: ") + e.what());
  }
}

}  // namespace gprof::collector::lifecycle
