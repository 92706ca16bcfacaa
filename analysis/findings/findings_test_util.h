// Helpers of the findings unit tests (findings_test.cpp, findings_signals_test.cpp): hand-built
// profiles whose times are ns after t0 (the collection start, the trace origin), on thread kTid,
// with the API names the tests use, and lookups of a finding and its evidence.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "model/profile.h"

namespace gprof::findings_test {

constexpr uint64_t t0 = 1'700'000'000'000'000'000ull;
constexpr uint32_t kTid = 1;
constexpr uint16_t kLaunch = 211, kStreamSync = 131, kDeviceSync = 165, kMemcpySync = 31,
                   kMemcpyAsync = 41, kOccupancy = 300;
constexpr uint32_t kStream = 7;

// Times below are ns after t0; the profile's collection starts at t0 (the trace origin).
inline Profile NewProfile() {
  Profile p;
  p.info.pid = 7;
  p.info.start_ns = t0;
  p.api_names.push_back({kLaunch, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.api_names.push_back(
      {kStreamSync, ApiDomain::kRuntime, 0, p.strings.Intern("cudaStreamSynchronize")});
  p.api_names.push_back(
      {kDeviceSync, ApiDomain::kRuntime, 0, p.strings.Intern("cudaDeviceSynchronize")});
  p.api_names.push_back({kMemcpySync, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemcpy")});
  p.api_names.push_back(
      {kMemcpyAsync, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemcpyAsync")});
  p.api_names.push_back({kOccupancy, ApiDomain::kRuntime, 0,
                         p.strings.Intern("cudaOccupancyMaxActiveBlocksPerMultiprocessor")});
  LaunchConfig lc{};
  lc.device_id = 0;
  lc.context_id = 1;
  p.launch_configs.push_back(lc);
  return p;
}
inline void AddRange(Profile* p, uint64_t start, uint64_t end, const char* name) {
  p->ranges.push_back({t0 + start, t0 + end, p->strings.Intern(name), kTid, 0, 0, 0});
}
inline void AddApi(Profile* p, uint64_t start, uint64_t end, uint32_t corr, uint16_t cbid) {
  p->api_calls.push_back({t0 + start, t0 + end, corr, kTid, cbid, ApiDomain::kRuntime, 0, 0});
}
inline void AddKernel(Profile* p, uint64_t start, uint64_t end, uint32_t corr, const char* name,
                      uint32_t stream = kStream) {
  p->kernels.push_back({t0 + start, t0 + end, corr, p->strings.Intern(name), 0, stream});
}
inline void AddCopy(Profile* p, uint64_t start, uint64_t end, uint32_t corr, CopyKind kind,
                    MemKind src, MemKind dst, uint64_t bytes, bool async,
                    uint32_t stream = kStream) {
  Memcpy m{};
  m.start_ns = t0 + start;
  m.end_ns = t0 + end;
  m.bytes = bytes;
  m.correlation_id = corr;
  m.stream_id = stream;
  m.context_id = 1;
  m.kind = kind;
  m.src_kind = src;
  m.dst_kind = dst;
  m.is_async = async ? 1 : 0;
  p->memcpys.push_back(m);
}

inline const Finding* Find(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}
inline uint64_t Ns(const Finding& f, const char* key) {
  const Evidence* e = f.Get(key);
  EXPECT_NE(e, nullptr) << f.id << " has no " << key;
  return e ? e->n : 0;
}
inline double X(const Finding& f, const char* key) {
  const Evidence* e = f.Get(key);
  EXPECT_NE(e, nullptr) << f.id << " has no " << key;
  return e ? e->x : 0;
}

}  // namespace gprof::findings_test
