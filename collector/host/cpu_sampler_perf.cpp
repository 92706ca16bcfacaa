// --cpu-sampling's perf backend (cpu_sampler.h): perf_event_open task-clock events and the
// reader thread that moves their samples into the queue.
//
// Rules: StartPerfSampler runs once on the thread that initializes gprof-run (a program thread,
// cold); everything else runs on the reader thread, gprof-run's own, created before the events
// are opened so that it is not sampled. The program's threads run no code of ours: the kernel
// takes each sample in its timer interrupt and writes it into the event's ring.
//
// Events: PERF_COUNT_SW_TASK_CLOCK with sample_period = 1e9 / hz ns of the thread's CPU time,
// user space only (exclude_kernel: perf_event_paranoid 2 allows that much to a process on
// itself), stamped with CLOCK_REALTIME (use_clockid, CUPTI's clock), one per (thread alive at
// start, CPU), with inherit so that threads they create later are sampled too (the kernel writes
// an inherited event's samples to its parent's buffer). Per CPU and not per thread alone: the
// kernel refuses to mmap an inherited per-task event that counts on every CPU (perf_mmap: all
// children would write to one ring), as `perf record` knows; the events of one CPU share the
// ring of the first (PERF_EVENT_IOC_SET_OUTPUT). Samples of forked children (inherit follows fork
// too) are told apart by pid and left out. The user callchain is
// the kernel's frame-pointer walk: exact for the sampled PC, and through frames built with frame
// pointers; a function built without them may lose its callers (the timer backend unwinds
// .eh_frame instead).
#include <dirent.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

// Data pages per CPU's ring (a power of two), plus the header page; fewer where the locked-memory
// allowance (perf_event_mlock_kb) is short.
constexpr size_t kRingPages[] = {16, 4, 1};
// Most events opened (threads at start x CPUs): file descriptors are the program's too.
constexpr size_t kMaxEvents = 512;
constexpr int kReadEveryMs = 10;

struct Ring {
  int fd = -1;
  perf_event_mmap_page* header = nullptr;
  size_t data_size = 0;
};

struct PerfSampler {
  std::vector<Ring> rings;   // one per CPU that has one
  std::vector<int> followers;  // events writing into a ring of `rings`
  std::thread reader;
  std::atomic<bool> stop{false};
  std::atomic<int> reader_tid{0};
  std::atomic<bool> go{false};
  pid_t pid = 0;
  uint64_t period_ns = 0;  // each sample's CPU time
};
PerfSampler* g_perf = nullptr;  // created once, never freed

int OpenEvent(pid_t tid, int cpu, uint32_t hz) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = hz >= 1000000000u ? 1 : 1000000000ull / hz;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.exclude_callchain_kernel = 1;
  attr.inherit = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_REALTIME;
  attr.sample_max_stack = kMaxStackDepth + 1;  // + the PERF_CONTEXT_USER marker
  return static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// Copies `n` bytes at ring offset `at` (which may wrap) into `out`.
void CopyOut(const Ring& r, uint64_t at, void* out, size_t n) {
  const auto* data = reinterpret_cast<const char*>(r.header) + r.header->data_offset;
  const size_t off = at & (r.data_size - 1);
  const size_t first = std::min(n, r.data_size - off);
  std::memcpy(out, data + off, first);
  if (first < n) std::memcpy(static_cast<char*>(out) + first, data, n - first);
}

void ReadRing(const Ring& r, pid_t pid, uint64_t period_ns) {
  const uint64_t head = __atomic_load_n(&r.header->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = r.header->data_tail;
  alignas(8) char rec[8 * (kMaxStackDepth + 8) + 2048];
  while (tail < head) {
    perf_event_header h{};
    CopyOut(r, tail, &h, sizeof h);
    if (h.size < sizeof h) break;  // corrupt: drop the rest of this read
    if (h.type == PERF_RECORD_SAMPLE && h.size <= sizeof rec) {
      CopyOut(r, tail, rec, h.size);
      // IP, pid/tid, time, callchain (nr, ips): sample_type's order (perf_event.h).
      const auto* u = reinterpret_cast<const uint64_t*>(rec + sizeof h);
      const auto* ids = reinterpret_cast<const uint32_t*>(&u[1]);
      const uint64_t time_ns = u[2];
      const uint64_t nr = u[3];
      uint64_t pcs[kMaxStackDepth];
      uint32_t depth = 0;
      const size_t fit = (h.size - sizeof h) / 8 - 4;
      for (uint64_t i = 0; i < nr && i < fit && depth < kMaxStackDepth; ++i) {
        const uint64_t pc = u[4 + i];
        if (pc >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) continue;  // a context marker
        if (pc == 0) break;  // the frame-pointer walk ran out (a frame without frame pointers)
        // The first is the sampled PC itself: + 1 so that the symbolizer's pc - 1 (for return
        // addresses) lands on it.
        pcs[depth] = depth == 0 ? pc + 1 : pc;
        ++depth;
      }
      if (static_cast<pid_t>(ids[0]) == pid && depth > 0) {
        Queue().TryPush(time_ns, ids[1], period_ns, pcs, depth);
      }
    } else if (h.type == PERF_RECORD_LOST) {
      uint64_t lost[3];  // header, id, lost
      CopyOut(r, tail, lost, sizeof lost);
      Queue().CountDropped(lost[2]);
    }
    tail += h.size;
  }
  __atomic_store_n(&r.header->data_tail, head, __ATOMIC_RELEASE);
}

void ReaderMain(PerfSampler* s) {
  s->reader_tid.store(static_cast<int>(::syscall(SYS_gettid)), std::memory_order_release);
  while (!s->go.load(std::memory_order_acquire)) std::this_thread::yield();
  timespec pause{0, kReadEveryMs * 1000000L};
  for (;;) {
    const bool last = s->stop.load(std::memory_order_acquire);
    for (const Ring& r : s->rings) ReadRing(r, s->pid, s->period_ns);
    if (last) return;
    ::nanosleep(&pause, nullptr);
  }
}

std::vector<pid_t> ThreadsNow(pid_t except) {
  std::vector<pid_t> tids;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return {static_cast<pid_t>(::syscall(SYS_gettid))};
  while (dirent* e = ::readdir(dir)) {
    const long tid = std::strtol(e->d_name, nullptr, 10);
    if (tid > 0 && tid != except) tids.push_back(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  return tids;
}

}  // namespace

bool StartPerfSampler(uint32_t hz, std::string* why) noexcept {
  try {
    // A probe on the calling thread first: refused here means refused everywhere.
    const int probe = OpenEvent(0, 0, hz);
    if (probe < 0) {
      *why = std::string("perf_event_open: ") + std::strerror(errno);
      return false;
    }
    ::close(probe);
    auto* s = new PerfSampler;
    s->pid = ::getpid();
    s->period_ns = hz >= 1000000000u ? 1 : 1000000000ull / hz;
    // The reader starts first, with every signal blocked (the program's handlers are not ours to
    // run), and waits: the events below are opened on the threads alive now except it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    s->reader = std::thread(&ReaderMain, s);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    int reader_tid = 0;
    while ((reader_tid = s->reader_tid.load(std::memory_order_acquire)) == 0) {
      std::this_thread::yield();
    }
    const long page = ::sysconf(_SC_PAGESIZE);
    const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF));
    const std::vector<pid_t> tids = ThreadsNow(reader_tid);
    if (tids.size() * static_cast<size_t>(cpus) > kMaxEvents) {
      *why = std::to_string(tids.size()) + " threads x " + std::to_string(cpus) +
             " CPUs would take more than " + std::to_string(kMaxEvents) + " file descriptors";
    } else {
      for (int cpu = 0; cpu < cpus; ++cpu) {
        int ring_fd = -1;
        for (pid_t tid : tids) {
          const int fd = OpenEvent(tid, cpu, hz);
          if (fd < 0) continue;  // an offline CPU, or the thread has exited meanwhile
          if (ring_fd >= 0) {
            if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) == 0) {
              s->followers.push_back(fd);
            } else {
              ::close(fd);
            }
            continue;
          }
          for (size_t pages : kRingPages) {
            void* m = ::mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
                             fd, 0);
            if (m == MAP_FAILED) continue;
            Ring r;
            r.fd = fd;
            r.header = static_cast<perf_event_mmap_page*>(m);
            r.data_size = pages * page;
            s->rings.push_back(r);
            ring_fd = fd;
            break;
          }
          if (ring_fd < 0) {
            *why = std::string("mmap of a perf ring: ") + std::strerror(errno);
            ::close(fd);
          }
        }
      }
    }
    g_perf = s;
    s->go.store(true, std::memory_order_release);
    if (s->rings.empty()) {
      if (why->empty()) *why = "no perf ring could be mapped";
      StopPerfSampler();
      return false;
    }
    return true;
  } catch (...) {
    *why = "out of memory";
    return false;
  }
}

void StopPerfSampler() noexcept {
  PerfSampler* s = g_perf;
  if (s == nullptr || !s->reader.joinable()) return;
  for (const Ring& r : s->rings) ::ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
  for (int fd : s->followers) ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  s->stop.store(true, std::memory_order_release);
  s->reader.join();  // it reads every ring once more after seeing stop
}

}  // namespace gprof::collector::cpu_sampling_internal
