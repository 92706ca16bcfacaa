// The sample queue's shared memory (cpu_sample_queue.h). Cold: Init in the program when sampling
// starts, Attach in gprof-cpu-sampler.
#include "collector/host/cpu_sample_queue.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

namespace gprof::collector {

bool CpuSampleQueue::Init(size_t capacity) noexcept {
  if (slots_ != nullptr) return true;
  const size_t bytes = Bytes(capacity);
  int fd = static_cast<int>(::syscall(SYS_memfd_create, "gprof-cpu-samples", MFD_CLOEXEC));
  if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    fd = -1;
  }
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, fd, 0);
  if (mem == MAP_FAILED) {
    if (fd >= 0) ::close(fd);
    return false;
  }
  shared_ = new (mem) Shared{};  // zero pages: the counters start at 0
  auto* slots = reinterpret_cast<Slot*>(static_cast<char*>(mem) + sizeof(Shared));
  for (size_t i = 0; i < capacity; ++i) slots[i].seq.store(i, std::memory_order_relaxed);
  mask_ = capacity - 1;
  slots_ = slots;
  fd_ = fd;
  return true;
}

bool CpuSampleQueue::Attach(int fd, size_t capacity) noexcept {
  void* mem = ::mmap(nullptr, Bytes(capacity), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) return false;
  shared_ = static_cast<Shared*>(mem);
  slots_ = reinterpret_cast<Slot*>(static_cast<char*>(mem) + sizeof(Shared));
  mask_ = capacity - 1;
  return true;
}

}  // namespace gprof::collector
