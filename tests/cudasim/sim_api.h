// Internal C interface between the stand-in libcudart.so.13 (which owns the virtual GPU, the
// timeline and the knobs) and the stand-in libcupti.so.13 (which owns subscribers, callbacks and
// activity buffers). Test-only: the product never links or ships either library.
//
// Threads: every function may be called from any application thread and from the CUPTI worker
// thread. The hooks are called by libcudart on the application thread that made the API call,
// never while libcudart holds its state lock.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {

// Parsed CUDASIM_* environment (see tests/cudasim/README.md). Read once, immutable afterwards.
struct CudasimKnobs {
  uint64_t api_ns;                 // host time of an ordinary runtime call
  uint64_t launch_api_ns;          // host time of a kernel launch call
  uint64_t launch_latency_ns;      // a kernel starts >= launch call start + this
  uint64_t kernel_base_ns;         // kernel duration = base + threads * ps_per_thread / 1000
  uint64_t kernel_ps_per_thread;
  double bw_pageable_gbps;         // host pageable <-> device
  double bw_pinned_gbps;           // host pinned <-> device
  double bw_dtod_gbps;             // device <-> device, memset
  uint64_t flush_period_ms;        // CUPTI worker wake-up period
  uint64_t drop_every;             // drop every Nth activity record (0 = never)
  uint64_t max_buffers;            // request at most this many buffers (0 = unlimited)
  uint32_t cupti_version;          // value cuptiGetVersion reports
  const char* cupti_holder;        // non-null: CUPTI already held by this tool
  // Activity pipeline (README "Buffers"): kCuptiBuffers writes records into tool buffers as they
  // are emitted (requests on the emitting application thread, buffer-granular flush);
  // kStagedBuffers is the older model (one staging queue, requests and copies on the worker).
  uint32_t buffer_mode;
  bool per_thread_buffers;         // default of CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER
  bool incomplete_records;         // forced flush returns running work with 0 timestamps
  bool nested_driver;              // runtime calls fire nested driver callbacks and records
  bool inject_in_first_call;       // kernel launches: injection inside the call, after its ENTER
  bool load_driver;                // the one-time init dlopens lib-driver/libcuda.so.1 first
  uint32_t cupti_before_driver;    // kBeforeDriverAuto / Abort / Answer (README "No CUPTI call...")
  bool symbol_name_reuse;          // symbolName storage is overwritten after each callback
  uint32_t timestamp_clock;        // kClockCupti, or kClockTsc: "another tool" set a timestamp callback
  int64_t gpu_skew_ns;             // added to GPU-side timestamps (kernel, memcpy, memset)
  // CUDASIM_SIGNAL_IN_CUPTI=SIG:N: the thread writing the Nth activity record raises SIG while it
  // holds the activity lock (0: never).
  int signal_in_cupti;
  uint64_t signal_at_record;
  // Copies of 0 bytes, memsets of 0 bytes and host-to-host copies make a MEMCPY/MEMSET record
  // (README "Copies that move nothing": not documented either way).
  bool empty_copy_records;
  // The DEVICE record goes out at driver initialization before InitializeInjection runs, so an
  // injected tool's cuptiActivityEnable(DEVICE) comes too late for it (README "Knobs").
  bool device_record_before_injection;
};

enum : uint32_t { kCuptiBuffers = 0, kStagedBuffers = 1 };
enum : uint32_t { kClockCupti = 0, kClockTsc = 1 };
enum : uint32_t { kBeforeDriverAuto = 0, kBeforeDriverAbort = 1, kBeforeDriverAnswer = 2 };

// Set by libcupti when it loads. Each pointer is non-null.
struct CudasimToolHooks {
  // True when a subscriber wants this callback (cheap; lets libcudart skip building cbdata).
  bool (*callback_enabled)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
  void (*callback)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);
  bool (*kind_enabled)(CUpti_ActivityKind kind);
  // Copies one record (a CUpti_Activity* struct of `size` bytes). It counts as "completed" (may be
  // returned by a normal flush) once the CLOCK_REALTIME clock passes complete_ns.
  void (*record)(const CUpti_Activity* record, size_t size, uint64_t complete_ns);
  // Thread id as CUpti_ActivityAPI.threadId reports it (depends on cuptiSetThreadIdType).
  uint32_t (*thread_id)(void);
  // Called after every runtime API record is emitted, on the calling thread, to emit
  // external-correlation records for the ids pushed on this thread.
  void (*api_exit)(uint32_t correlation_id);
};

void cudasim_set_tool_hooks(const CudasimToolHooks* hooks);
const CudasimKnobs* cudasim_knobs(void);
// Test-only: replaces the knobs with ones parsed from `env` ("NAME=value" lines; the process
// environment is not read). nullptr re-reads the process environment. Call it before the CUDA or
// CUPTI calls that should see the new values (in-process tests pass maps, never setenv).
void cudasim_set_knobs_for_test(const char* env);
uint64_t cudasim_now_ns(void);               // CLOCK_REALTIME in ns, as CUPTI stamps records
uint32_t cudasim_next_correlation_id(void);
// Context: null until the first runtime call created it.
CUcontext cudasim_current_context(void);
uint32_t cudasim_stream_id(CUstream stream);   // CUPTI stream id (default stream: 7); 0 unknown
// Fills the DEVICE activity record for device 0; returns false before context creation.
bool cudasim_fill_device_record(CUpti_ActivityDevice5* record);
// Direct driver-API launch (the stand-in libcuda.so.1's cuLaunchKernel / cuLaunchKernelEx):
// a driver-domain call (`cbid`, `name`) with its own correlation id, no runtime call around it.
// `params` is the cu*_params struct the callbacks report. Returns a CUresult.
int cudasim_driver_launch(CUpti_CallbackId cbid, const char* name, CUfunction f, unsigned grid_x,
                          unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                          unsigned block_z, unsigned shared_mem, CUstream stream, void** args,
                          const void* params);
// Makes sure the one-time initialization (injection, context) has run; cuInit calls it.
void cudasim_initialize(void);
// True once the one-time initialization has begun running CUDA_INJECTION64_PATH's
// InitializeInjection (or reached that step without one): from then on CUPTI may be called.
bool cudasim_injection_started(void);
// Reports a call into a function this stand-in does not implement, then aborts.
[[noreturn]] void cudasim_unimplemented(const char* function_name);

}  // extern "C"
