// Which CUDA API calls become ApiCall records. Built once at start into a per-(domain, cbid) byte
// table so the API callback does one indexed load.
//
// Default filter: every runtime and driver call except polling and getter calls that a training
// loop makes thousands of times and that say nothing about where time goes (kDefaultDropped).
// GPROF_API_FILTER widens or narrows it: "all", "none", "default", plus "+name" (always record)
// and "-name" (never record). Names match with or without CUPTI's version suffix
// ("cudaMemcpy" matches "cudaMemcpy_v3020"; "cudaStreamSynchronize" matches its _ptsz variant).
//
// Names with and without the version suffix. The filter table and Profile::api_names are built
// only from cuptiGetCallbackName, which spells every runtime id with its suffix, as the cbid enum
// does ("cudaLaunchKernel_v7000", "cudaStreamSynchronize_ptsz_v7000"; the stand-in generates the
// same from cupti_runtime_cbid.h). CUpti_CallbackData::functionName is documented only as "Name of
// the runtime or driver API function which issued the callback ... a global constant"
// (docs.nvidia.com/cupti/api/structCUpti__CallbackData.html, CUPTI 13): the documentation does not
// say whether a version suffix is present, and we found no authoritative sample; the stand-in
// sends it without. So nothing here depends on functionName, and code that matches it (the
// ApiHook: `api:NAME` steps, cudaProfilerStart/Stop) must compare BaseApiName() of both sides.
//
// Threads: built on the start thread (cold); Record() is read-only from any thread afterwards.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "model/api_name.h"

namespace gprof::collector {

// The calls the default filter drops (base names; a constant array, nothing to destroy at exit).
std::span<const std::string_view> DefaultDroppedApis();

// BaseApiName / DisplayApiName (model/api_name.h): the names matched and shown, from either form
// of functionName, cuptiGetCallbackName or user input.
using gprof::BaseApiName;
using gprof::DisplayApiName;

// One table per domain: entry cbid is 1 when calls with that id are recorded. `names[cbid]` is the
// CUPTI name of the id ("" when unknown; unknown ids follow the base choice).
std::vector<uint8_t> BuildApiFilterTable(const ApiFilter& filter,
                                         const std::vector<std::string>& names);

// GPROF_BACKTRACE's per-cbid table for one domain: entry cbid is 1 when calls with that id get a
// native stack (`groups`: BacktraceGroup bits from config.h). `runtime` picks the domain's launch
// ids. Sync: *Synchronize; alloc: cudaMalloc*/cudaFree*/cudaHostAlloc/cuMemAlloc*/cuMemFree*/
// cuMemHostAlloc; memcpy: cudaMemcpy*/cudaMemset*/cuMemcpy*/cuMemset*; launch: the launch ids.
std::vector<uint8_t> BuildBacktraceTable(uint8_t groups, const std::vector<std::string>& names,
                                         bool runtime);

// Which callback ids of one domain the session enables (cuptiEnableCallback), instead of the
// whole domain (about 1,300 ids, each call then two callbacks): entry cbid is 1 when `record`
// (BuildApiFilterTable's table) records it or step detection needs it (`config`: a kernel-regex
// step source needs the launch ids, `api:NAME` that call's ids, a cudaProfilerApi capture range
// cudaProfilerStart/Stop and cuProfilerStart/Stop). Runtime ids the filter drops stay enabled
// unless they are of the default drop list (getters and polls) or no driver id is recorded: the
// callback learns from a runtime call's ENTER and EXIT that the driver calls in between are the
// runtime's own, not the user's, and the default list's calls only call driver functions of the
// same list. Kineto switches cudaGetDevice, cuCtxGetCurrent, cuDevicePrimaryCtxGetState and
// cuKernelGetAttribute off likewise (pytorch/kineto libkineto/src/CuptiActivityApi.cpp,
// enableCuptiActivities, for its activity records).
std::vector<uint8_t> BuildCallbackTable(const std::vector<uint8_t>& record,
                                        const std::vector<std::string>& names, bool runtime,
                                        bool driver_records_any, const Config& config);

// Launch-like callback ids (REFERENCE.md §1), for step detection and correlation checks.
bool IsRuntimeLaunchCbid(uint32_t cbid);
bool IsDriverLaunchCbid(uint32_t cbid);

// cupti_runtime_cbid.h / cupti_driver_cbid.h: +1 for the calls that begin a stream capture
// (cu/cudaStreamBeginCapture*, ...ToGraph), -1 for those that end one (cu/cudaStreamEndCapture),
// 0 for every other id. Their callbacks are always enabled (BuildCallbackTable): the API
// callback follows each thread's open captures with them.
int CaptureEdge(bool runtime, uint32_t cbid);

}  // namespace gprof::collector
