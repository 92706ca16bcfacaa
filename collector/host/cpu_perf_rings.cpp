// --cpu-sampling's perf_event_open rings (cpu_perf_rings.h). Fixed arrays and raw system calls
// only: the sampler process runs this right after clone().
#include "collector/host/cpu_perf_rings.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "collector/host/cpu_sample_queue.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

// Data pages per CPU's ring (a power of two), plus the header page; fewer where the locked-memory
// allowance (perf_event_mlock_kb) is short.
constexpr size_t kRingPages[] = {16, 4, 1};

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
void CopyOut(const PerfRing& r, uint64_t at, void* out, size_t n) {
  const auto* data = reinterpret_cast<const char*>(r.header) + r.header->data_offset;
  const size_t off = at & (r.data_size - 1);
  const size_t first = std::min(n, r.data_size - off);
  std::memcpy(out, data + off, first);
  if (first < n) std::memcpy(static_cast<char*>(out) + first, data, n - first);
}

void ReadRing(const PerfRing& r, pid_t pid, uint64_t period_ns, CpuSampleQueue& queue) {
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
        queue.TryPush(time_ns, ids[1], period_ns, pcs, depth);
      }
    } else if (h.type == PERF_RECORD_LOST) {
      uint64_t lost[3];  // header, id, lost
      CopyOut(r, tail, lost, sizeof lost);
      queue.CountDropped(lost[2]);
    }
    tail += h.size;
  }
  __atomic_store_n(&r.header->data_tail, head, __ATOMIC_RELEASE);
}

void CloseAll(PerfRings* out, long page_size) {
  for (size_t i = 0; i < out->n_followers; ++i) ::close(out->followers[i]);
  for (size_t i = 0; i < out->n_rings; ++i) {
    ::munmap(out->rings[i].header, out->rings[i].data_size + static_cast<size_t>(page_size));
    ::close(out->rings[i].fd);
  }
  out->n_followers = out->n_rings = 0;
}

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

}  // namespace

int ListThreads(pid_t pid, pid_t except, pid_t* out, size_t max) {
  char path[64] = "/proc/";
  char digits[16];
  int nd = 0;
  for (unsigned v = static_cast<unsigned>(pid); nd == 0 || v != 0; v /= 10) {
    digits[nd++] = static_cast<char>('0' + v % 10);
  }
  size_t at = 6;
  while (nd > 0) path[at++] = digits[--nd];
  std::memcpy(path + at, "/task", 6);
  const int dir = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, path,
                                             O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return -errno;
  size_t n = 0;
  alignas(8) char buf[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      const auto* e = reinterpret_cast<const LinuxDirent64*>(buf + off);
      off += e->d_reclen;
      long tid = 0;
      for (const char* c = e->d_name; *c >= '0' && *c <= '9'; ++c) tid = tid * 10 + (*c - '0');
      if (tid > 0 && tid != except && n < max) out[n++] = static_cast<pid_t>(tid);
    }
  }
  ::close(dir);
  return static_cast<int>(n);
}

PerfRingsError OpenPerfRings(const pid_t* tids, size_t n_tids, int cpus, long page_size,
                             uint32_t hz, PerfRings* out, int* err_no) {
  if (n_tids == 0) return PerfRingsError::kNoThreads;
  if (n_tids * static_cast<size_t>(cpus) > kMaxPerfEvents) {
    *err_no = EMFILE;
    return PerfRingsError::kTooManyEvents;
  }
  // The first thread on CPU 0 first: refused there means refused everywhere (EACCES, EPERM).
  for (int cpu = 0; cpu < cpus; ++cpu) {
    int ring_fd = -1;
    for (size_t t = 0; t < n_tids; ++t) {
      const int fd = OpenEvent(tids[t], cpu, hz);
      if (fd < 0) {
        if (out->n_rings == 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS)) {
          *err_no = errno;
          CloseAll(out, page_size);
          return PerfRingsError::kOpen;
        }
        continue;  // an offline CPU, or the thread has exited meanwhile
      }
      if (ring_fd >= 0) {
        if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) == 0) {
          out->followers[out->n_followers++] = fd;
        } else {
          ::close(fd);
        }
        continue;
      }
      for (size_t pages : kRingPages) {
        void* m = ::mmap(nullptr, (pages + 1) * static_cast<size_t>(page_size),
                         PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) continue;
        out->rings[out->n_rings++] = PerfRing{fd, static_cast<perf_event_mmap_page*>(m),
                                              pages * static_cast<size_t>(page_size)};
        ring_fd = fd;
        break;
      }
      if (ring_fd < 0) {
        *err_no = errno;
        ::close(fd);
      }
    }
  }
  if (out->n_rings == 0) {
    if (*err_no == 0) *err_no = ENODEV;
    return PerfRingsError::kMmap;
  }
  return PerfRingsError::kNone;
}

void ReadPerfRings(const PerfRings& rings, pid_t pid, uint64_t period_ns, CpuSampleQueue& queue) {
  for (size_t i = 0; i < rings.n_rings; ++i) ReadRing(rings.rings[i], pid, period_ns, queue);
}

void DisablePerfRings(const PerfRings& rings) {
  for (size_t i = 0; i < rings.n_rings; ++i) ::ioctl(rings.rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
  for (size_t i = 0; i < rings.n_followers; ++i) {
    ::ioctl(rings.followers[i], PERF_EVENT_IOC_DISABLE, 0);
  }
}

const char* PerfRingsErrorText(PerfRingsError e) {
  switch (e) {
    case PerfRingsError::kNone: return "no error";
    case PerfRingsError::kOpen: return "perf_event_open refused";
    case PerfRingsError::kMmap: return "no perf ring could be mapped";
    case PerfRingsError::kTooManyEvents: return "threads x CPUs would take more than 512 events";
    case PerfRingsError::kNoThreads: return "no thread to sample";
  }
  return "unknown";
}

}  // namespace gprof::collector::cpu_sampling_internal
