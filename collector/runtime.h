// The injection library's lifecycle: one init shared by the CUDA and NVTX entry points, the
// exit/signal flush that writes the dump, fork handling, and the calls schedule windows use to
// write a profile for a window. inject/ is a thin C ABI over these functions.
//
// Threads: the On* entry points run on whichever application thread first calls CUDA or NVTX
// (possibly several at once: init is guarded by one atomic state and runs exactly once). The exit
// flush runs in the atexit handler or on the flush thread started at init (woken by a signal
// handler). WriteWindow runs on the window thread. All of these are cold; nothing here runs
// on the hot path. Every function is noexcept: failures are logged once and make the library
// inert; the program keeps running.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collector/window_tracker.h"
#include "model/profile.h"

namespace gprof::collector {

// InitializeInjection (CUDA driver, at cuInit): init, then start GPU collection once. Returns 1.
int OnCudaInjection() noexcept;
// InitializeInjectionNvtx2 (each NVTX client instance): init, then hook that instance's tables.
// Returns 1 (also when NVTX collection is off: the client then turns every call into a no-op).
int OnNvtxInjection(const void* (*get_export_table)(uint32_t)) noexcept;
// Loading the library (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH or LD_PRELOAD) runs no code
// of ours: the one init runs at the first of the two entry points above.

// Pure helpers (tests call them with explicit inputs). Dump names. Whole run:
// `<dir>/<program>.<pid>.gpdump`; window: `<dir>/<program>.<pid>.cycle<C>.steps<A>-<B>.gpdump`.
// `dir` "" means the current directory.
std::string WholeRunDumpPath(const std::string& dir, const ProfileInfo& info);
std::string WindowDumpPath(const std::string& dir, const ProfileInfo& info);

// Program name for dump names: basename of the executable, or for a Python interpreter the
// script's basename (`python train.py` -> "train.py"), the module for `-m mod`, "python" for -c.
std::string ProgramNameFrom(const std::string& exe_path, const std::vector<std::string>& argv);
// Rank and world size from RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMIX_RANK
// (PMI_SIZE), SLURM_PROCID/SLURM_NTASKS, first match wins; -1 when unknown.
void RankFromEnv(const std::map<std::string, std::string>& env, int32_t* rank, int32_t* world);

// Schedule windows: builds a profile of the window `span` — host records, plus GPU records
// drained into `gpu_pending` and moved in — cuts it to the window (window_profile.h; GPU records
// of later windows go back into `gpu_pending`), and writes it to WindowDumpPath. Returns the path
// written or "" on failure (logged). Serialized with the exit flush. Window thread or exit only.
std::string WriteWindow(const WindowSpan& span, Profile* gpu_pending) noexcept;

// The exit flush: writes the whole-run dump once (later calls return at once, or wait for a flush
// in progress on another thread). Called by the atexit handler and the signal flush thread.
void FlushAtExit() noexcept;

}  // namespace gprof::collector
