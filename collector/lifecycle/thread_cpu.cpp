// See thread_cpu.h. Rules: cold code on our own threads; nothing throws out of here, and nothing
// is freed (the state outlives other libraries' atexit handlers; a forked child, inert, never
// uses it).
#include "collector/lifecycle/thread_cpu.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {
namespace {

struct Sampler {
  std::mutex mu;  // guards everything below (sampler thread and dump writers)
  std::condition_variable cv;
  bool stop = false;
  std::deque<ThreadCpuSample> samples;
  std::vector<uint64_t> rounds;  // the times of the rounds whose samples are held
  uint32_t own_tid = 0;          // the sampler thread: not a program thread
  std::thread thread;
};

std::atomic<Sampler*> g_sampler{nullptr};

// The CPU clock of thread `tid` of this process: what pthread_getcpuclockid makes for a pthread
// (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), include/linux/posix-timers.h).
clockid_t ThreadCpuClock(uint32_t tid) {
  return static_cast<clockid_t>((~static_cast<clockid_t>(tid) << 3) | 6);
}

// One thread's counters; false when the thread is gone.
bool ReadThread(int task_dir, uint32_t tid, ThreadCpuSample* s) {
  char path[32];
  std::snprintf(path, sizeof path, "%u/schedstat", tid);
  const int fd = ::openat(task_dir, path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[96];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    unsigned long long run = 0, wait = 0;
    if (n > 0) {
      buf[n] = '\0';
      if (std::sscanf(buf, "%llu %llu", &run, &wait) == 2) {
        s->cpu_ns = run;
        s->wait_ns = wait;
        return true;
      }
    }
  }
  timespec ts;
  if (::clock_gettime(ThreadCpuClock(tid), &ts) != 0) return false;
  s->cpu_ns = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
  s->wait_ns = 0;
  return true;
}

// One round over every thread of the process; mu held. Returns how many threads it read.
size_t Round(Sampler* s) {
  const int task_dir = ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (task_dir < 0) return 0;
  DIR* dir = ::fdopendir(::dup(task_dir));
  if (dir == nullptr) {
    ::close(task_dir);
    return 0;
  }
  const uint64_t now = NowNs();
  size_t threads = 0;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const unsigned long tid = std::strtoul(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || tid == 0 || tid == s->own_tid) continue;
    ThreadCpuSample sample{now, 0, 0, static_cast<uint32_t>(tid), 0};
    if (!ReadThread(task_dir, sample.tid, &sample)) continue;
    s->samples.push_back(sample);
    ++threads;
  }
  ::closedir(dir);
  ::close(task_dir);
  if (threads > 0) s->rounds.push_back(now);
  while (s->samples.size() > kThreadCpuMaxSamples) {
    const uint64_t oldest = s->samples.front().ts_ns;
    while (!s->samples.empty() && s->samples.front().ts_ns == oldest) s->samples.pop_front();
    if (!s->rounds.empty() && s->rounds.front() == oldest) s->rounds.erase(s->rounds.begin());
  }
  return threads;
}

void ThreadMain(Sampler* s) {
  try {
    std::unique_lock<std::mutex> lock(s->mu);
    s->own_tid = static_cast<uint32_t>(::syscall(SYS_gettid));
    uint64_t period = kThreadCpuPeriodNs;
    for (;;) {
      if (s->cv.wait_for(lock, std::chrono::nanoseconds(period), [s] { return s->stop; })) {
        return;
      }
      period = std::max<uint64_t>(kThreadCpuPeriodNs, Round(s) * kThreadCpuPeriodPerThreadNs);
    }
  } catch (...) {
    // Out of memory in a round: the samples so far stay; the profile simply has fewer.
  }
}

}  // namespace

bool StartThreadCpuSampler() {
  if (g_sampler.load(std::memory_order_acquire) != nullptr) return true;
  try {
    auto* s = new Sampler;
    {
      // The run's first round, here and now: the sampler thread may not be scheduled for a
      // while on a loaded machine, and the program's first step must not start before it.
      std::lock_guard<std::mutex> lock(s->mu);
      Round(s);
    }
    s->thread = std::thread(ThreadMain, s);
    g_sampler.store(s, std::memory_order_release);
    return true;
  } catch (const std::exception& e) {
    log::Warn(std::string("the thread CPU sampler could not start (") + e.what() +
              "); findings judge the host by its recorded ranges only");
    return false;
  }
}

void TakeThreadCpu(Profile* p, bool consume, uint64_t from_ns) {
  Sampler* s = g_sampler.load(std::memory_order_acquire);
  if (s == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->stop) Round(s);
    uint64_t from = 0;
    if (!consume) {
      for (uint64_t r : s->rounds) {
        if (r <= from_ns) from = r;
      }
      while (!s->samples.empty() && s->samples.front().ts_ns < from) s->samples.pop_front();
      s->rounds.erase(s->rounds.begin(),
                      std::lower_bound(s->rounds.begin(), s->rounds.end(), from));
    }
    p->thread_cpu.insert(p->thread_cpu.end(), s->samples.begin(), s->samples.end());
    if (consume) {
      s->samples.clear();
      s->rounds.clear();
    }
  } catch (...) {
    // Out of memory: the profile goes without (more of) them.
  }
}

void StopThreadCpuSampler() {
  Sampler* s = g_sampler.load(std::memory_order_acquire);
  if (s == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->stop) return;
    s->stop = true;
  }
  s->cv.notify_all();
  if (s->thread.joinable() && s->thread.get_id() != std::this_thread::get_id()) s->thread.join();
}

}  // namespace gprof::collector::lifecycle
