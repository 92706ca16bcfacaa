// The virtual GPU behind the stand-in libcudart.so.13: knobs, the registered kernels, streams,
// events, allocations, the per-stream timeline, correlation ids, injection, and the helper that
// wraps every API call in CUPTI enter/exit callbacks and an API activity record. Test-only.
//
// Threads: any application thread. State::mu guards the tables and the timeline; it is never
// held while a CUPTI hook runs or while a thread waits for the virtual GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <map>
#include <unordered_map>
#include <vector>

#include "tests/cudasim/sim_api.h"

namespace gprof::cudasim {

struct Kernel {
  const void* host_fun = nullptr;
  std::string name;       // mangled device name, as CUPTI reports it
  uint64_t duration_override_ns = 0;  // from CUDASIM_KERNEL_NS; 0 = derive from grid size
};

struct Capture;  // graphs.cpp: a stream capture in progress

struct Stream {
  uint32_t id = 0;        // CUPTI stream id
  bool blocking = true;   // synchronizes with the legacy default stream
  int priority = 0;
  uint64_t tail_ns = 0;   // virtual time at which the last work queued on it ends
  Capture* capture = nullptr;  // set while the stream captures (graphs.h); guarded by State::mu
};

struct Event {
  uint32_t id = 0;
  unsigned flags = 0;
  bool recorded = false;
  uint64_t time_ns = 0;   // virtual time the recorded point is reached
};

struct Allocation {
  size_t size = 0;
  CUpti_ActivityMemoryKind kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  bool async = false;
};

struct State {
  std::mutex mu;  // leaf lock: never call hooks or wait while holding it
  std::deque<Kernel> kernels;  // stable addresses: a cudaKernel_t is a Kernel*
  std::unordered_map<const void*, Kernel*> kernel_by_host_fun;
  std::vector<std::pair<std::string, uint64_t>> kernel_overrides;  // CUDASIM_KERNEL_NS
  Stream legacy;                           // the default stream (id 7)
  std::set<Stream*> streams;               // created streams
  std::set<Event*> events;
  std::map<uintptr_t, Allocation> allocations;  // by start address
  uint32_t next_stream_id = 13;
  uint32_t next_event_id = 1;
  int fatbins = 0;
};

State& GetState();
const CudasimKnobs& Knobs();
const CudasimToolHooks* Hooks();  // null until libcupti loads
uint64_t NowNs();

// Runs CUDA_INJECTION64_PATH's InitializeInjection (once per process) and creates the context.
void EnsureInitialized();

// Waits (sleeping, then spinning) until CLOCK_REALTIME reaches t_ns.
void WaitUntil(uint64_t t_ns);

// Resolves a runtime stream handle (0, cudaStreamLegacy, cudaStreamPerThread, or created) under
// mu; null when invalid.
Stream* ResolveStreamLocked(State& s, cudaStream_t stream);

// Queues `duration` ns of work on `stream` starting no earlier than `earliest`; returns start.
// Caller holds mu. Keeps the legacy default stream's implicit synchronization.
uint64_t EnqueueLocked(State& s, Stream* stream, uint64_t earliest, uint64_t duration);

// The time all work on all streams ends. Caller holds mu.
uint64_t DeviceTailLocked(State& s);

// Kind of the memory at ptr (device allocation, pinned host, or pageable). Caller holds mu.
CUpti_ActivityMemoryKind MemoryKindLocked(State& s, const void* ptr);

void SetLastError(cudaError_t err);
cudaError_t TakeLastError(bool reset);  // cudaGetLastError / cudaPeekAtLastError

// Emits one activity record if a tool enabled its kind.
void EmitRecord(const void* record, size_t size, uint64_t complete_ns);
bool KindEnabled(CUpti_ActivityKind kind);

// One runtime or driver API call as CUPTI sees it: enter callback in the constructor; Finish()
// spends the configured host time, fires the exit callback and emits the API activity record.
// A driver call made inside a runtime call is constructed with kNestedDriver: with
// CUDASIM_NESTED_DRIVER=0 it is inert (no id, no callbacks, no record).
class ApiCall {
 public:
  enum Nesting { kTopLevel, kNestedDriver };
  ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
          const void* params, uint64_t host_ns, const char* symbol = nullptr,
          Nesting nesting = kTopLevel);
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;
  uint32_t correlation_id() const { return correlation_id_; }
  uint64_t start_ns() const { return start_ns_; }
  // When the call hands work to the GPU: after its ENTER callbacks returned. CUPTI calls the
  // callback "on entry" of the API function (cupti_callbacks.h, CUPTI_API_ENTER), before the
  // driver submits anything, so GPU work can never start before the tool's ENTER stamp.
  uint64_t submit_ns() const { return submit_ns_; }
  // sets_last_error=false for cudaGetLastError/cudaPeekAtLastError, which report errors.
  int Finish(int result, bool sets_last_error = true);

 private:
  void Fire(CUpti_ApiCallbackSite site, int* result);

  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
  const char* name_;
  const void* params_;
  const char* symbol_;
  uint64_t host_ns_;
  bool active_;
  uint32_t correlation_id_;
  uint64_t start_ns_;
  uint64_t submit_ns_ = 0;
  uint64_t correlation_data_ = 0;
};

// Runtime call helper: initializes, then ApiCall in the runtime domain with the ordinary latency
// (with CUDASIM_INJECT_IN_FIRST_CALL=1 the other way round: the ENTER fires before the injection).
#define CUDASIM_RUNTIME_CALL(var, cbid_suffix, name, params)                                   \
  if (!::gprof::cudasim::Knobs().inject_in_first_call) ::gprof::cudasim::EnsureInitialized();  \
  ::gprof::cudasim::ApiCall var(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##cbid_suffix, \
                                name, params, ::gprof::cudasim::Knobs().api_ns);              \
  if (::gprof::cudasim::Knobs().inject_in_first_call) ::gprof::cudasim::EnsureInitialized()

}  // namespace gprof::cudasim
