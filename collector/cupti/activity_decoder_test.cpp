// Decoder tests: real CUPTI record structs built in memory (Kineto's approach), decoded into model
// records, every field checked.
#include "collector/cupti/activity_decoder.h"
#include "tests/support/packed_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof::collector {
namespace {

KernelActivity MakeKernel(uint32_t correlation, const char* name) {
  KernelActivity k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 3500;
  k.deviceId = 1;
  k.contextId = 7;
  k.streamId = 13;
  k.gridX = 64; k.gridY = 2; k.gridZ = 1;
  k.blockX = 256; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.correlationId = correlation;
  k.name = name;
  k.graphId = 3;
  k.graphNodeId = 99;
  return k;
}

TEST(ActivityDecoder, KernelCarriesEveryField) {
  GpuBatch batch;
  KernelActivity a = MakeKernel(42, "_Z6matmulPfS_S_i");
  Kernel k = DecodeKernel(a, &batch);
  EXPECT_EQ(k.start_ns, 1000u);
  EXPECT_EQ(k.end_ns, 3500u);
  EXPECT_EQ(k.correlation_id, 42u);
  EXPECT_EQ(k.stream_id, 13u);
  EXPECT_EQ(batch.strings.Get(k.name), "_Z6matmulPfS_S_i");
  ASSERT_EQ(batch.launch_configs.size(), 1u);
  const LaunchConfig& c = batch.launch_configs[k.launch_config];
  EXPECT_EQ(c.grid[0], 64u);
  EXPECT_EQ(c.grid[1], 2u);
  EXPECT_EQ(c.grid[2], 1u);
  EXPECT_EQ(c.block[0], 256u);
  EXPECT_EQ(c.registers_per_thread, 40u);
  EXPECT_EQ(c.static_shared_bytes, 1024u);
  EXPECT_EQ(c.dynamic_shared_bytes, 4096u);
  EXPECT_EQ(c.context_id, 7u);
  EXPECT_EQ(c.device_id, 1u);
  EXPECT_EQ(c.graph_id, 3u);
  EXPECT_EQ(c.graph_node_id, 99u);
}

TEST(ActivityDecoder, LaunchConfigsAndNamesAreInterned) {
  GpuBatch batch;
  KernelActivity a = MakeKernel(1, "k");
  KernelActivity b = MakeKernel(2, "k");
  KernelActivity c = MakeKernel(3, "other");
  c.gridX = 1;
  Kernel ka = DecodeKernel(a, &batch);
  Kernel kb = DecodeKernel(b, &batch);
  Kernel kc = DecodeKernel(c, &batch);
  EXPECT_EQ(ka.launch_config, kb.launch_config);
  EXPECT_NE(ka.launch_config, kc.launch_config);
  EXPECT_EQ(ka.name, kb.name);
  EXPECT_NE(ka.name, kc.name);
  EXPECT_EQ(batch.launch_configs.size(), 2u);
}

// CUPTI shares one name pointer per kernel, but a module unload can free a name and a later
// kernel's name can land at the same address: the name cache must not hand out the old name.
TEST(ActivityDecoder, ReusedNamePointerGetsTheNewName) {
  GpuBatch batch;
  char name[32] = "_Z4longerPf";
  Kernel first = DecodeKernel(MakeKernel(1, name), &batch);
  std::strcpy(name, "_Z4long");  // shorter: a prefix of the old name
  Kernel second = DecodeKernel(MakeKernel(2, name), &batch);
  std::strcpy(name, "_Z4longerPi");  // same length, last byte differs
  Kernel third = DecodeKernel(MakeKernel(3, name), &batch);
  std::strcpy(name, "_Z4longerPf");  // back to the first
  Kernel fourth = DecodeKernel(MakeKernel(4, name), &batch);
  EXPECT_EQ(batch.strings.Get(first.name), "_Z4longerPf");
  EXPECT_EQ(batch.strings.Get(second.name), "_Z4long");
  EXPECT_EQ(batch.strings.Get(third.name), "_Z4longerPi");
  EXPECT_EQ(fourth.name, first.name);
  Kernel unnamed = DecodeKernel(MakeKernel(5, nullptr), &batch);
  EXPECT_EQ(batch.strings.Get(unnamed.name), "<unnamed>");
}

// More names than cache slots and more launch configurations than the recent-config check
// holds, interleaved: every kernel still gets its own name and configuration, each stored once.
TEST(ActivityDecoder, ManyNamesAndConfigsInterleavedStayExact) {
  std::vector<std::string> names;
  for (int i = 0; i < 150; ++i) names.push_back("_Z6kernel" + std::to_string(i) + "Pf");
  GpuBatch batch;
  std::vector<Kernel> out;
  for (uint32_t i = 0; i < 3000; ++i) {
    KernelActivity a = MakeKernel(i + 1, names[(i * 7) % names.size()].c_str());
    a.gridX = 1 + static_cast<int32_t>(i % 11);
    a.dynamicSharedMemory = static_cast<int32_t>((i % 3) * 1024);
    out.push_back(DecodeKernel(a, &batch));
  }
  EXPECT_EQ(batch.strings.size(), names.size() + 1);  // + the empty string (id 0)
  EXPECT_EQ(batch.launch_configs.size(), 33u);        // 11 grids x 3 shared sizes
  for (uint32_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(batch.strings.Get(out[i].name), names[(i * 7) % names.size()]) << i;
    const LaunchConfig& c = batch.launch_configs.at(out[i].launch_config);
    ASSERT_EQ(c.grid[0], 1 + i % 11) << i;
    ASSERT_EQ(c.dynamic_shared_bytes, (i % 3) * 1024) << i;
    ASSERT_EQ(c.block[0], 256u) << i;
  }
}

// The caches survive a move and Clear() as plain data; the batch left behind must still decode
// correctly (its tables are empty again, so every cached entry is stale).
TEST(ActivityDecoder, MovedFromAndClearedBatchesDecodeCorrectly) {
  GpuBatch batch;
  KernelActivity a = MakeKernel(1, "_Z3fooPf");
  KernelActivity b = MakeKernel(2, "_Z3barPf");
  b.gridX = 5;
  DecodeKernel(a, &batch);
  DecodeKernel(b, &batch);
  GpuBatch taken = std::move(batch);
  EXPECT_EQ(taken.launch_configs.size(), 2u);
  Kernel k = DecodeKernel(b, &batch);
  EXPECT_EQ(batch.strings.Get(k.name), "_Z3barPf");
  ASSERT_EQ(batch.launch_configs.size(), 1u);
  EXPECT_EQ(batch.launch_configs.at(k.launch_config).grid[0], 5u);
  taken.Clear();
  Kernel again = DecodeKernel(a, &taken);
  EXPECT_EQ(taken.strings.Get(again.name), "_Z3fooPf");
  ASSERT_EQ(taken.launch_configs.size(), 1u);
  EXPECT_EQ(taken.launch_configs.at(again.launch_config).grid[0], 64u);
}

TEST(ActivityDecoder, MemcpyPageableAndPinned) {
  MemcpyActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.flags = 0;
  a.bytes = 1 << 20;
  a.start = 10;
  a.end = 20;
  a.deviceId = 2;
  a.contextId = 5;
  a.streamId = 7;
  a.correlationId = 77;
  Memcpy m = DecodeMemcpy(a);
  EXPECT_EQ(m.kind, CopyKind::kHtoD);
  EXPECT_EQ(m.src_kind, MemKind::kPageable);
  EXPECT_EQ(m.dst_kind, MemKind::kDevice);
  EXPECT_EQ(m.bytes, 1u << 20);
  EXPECT_EQ(m.start_ns, 10u);
  EXPECT_EQ(m.end_ns, 20u);
  EXPECT_EQ(m.device_id, 2);
  EXPECT_EQ(m.src_device, 2);
  EXPECT_EQ(m.dst_device, 2);
  EXPECT_EQ(m.context_id, 5u);
  EXPECT_EQ(m.stream_id, 7u);
  EXPECT_EQ(m.correlation_id, 77u);
  EXPECT_EQ(m.is_async, 0);

  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  a.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  a.correlationId = 500;  // the driver call inside the runtime call
  a.runtimeCorrelationId = 78;
  m = DecodeMemcpy(a);
  EXPECT_EQ(m.kind, CopyKind::kDtoH);
  EXPECT_EQ(m.dst_kind, MemKind::kPinned);
  EXPECT_EQ(m.is_async, 1);
  EXPECT_EQ(m.correlation_id, 78u);
}

TEST(ActivityDecoder, PeerCopyNamesBothDevices) {
  PeerCopyActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.bytes = 4096;
  a.deviceId = 0;
  a.srcDeviceId = 0;
  a.dstDeviceId = 1;
  a.correlationId = 9;
  Memcpy m = DecodePeerCopy(a);
  EXPECT_EQ(m.kind, CopyKind::kPtoP);
  EXPECT_EQ(m.src_device, 0);
  EXPECT_EQ(m.dst_device, 1);
  EXPECT_EQ(m.bytes, 4096u);
  EXPECT_EQ(m.correlation_id, 9u);
}

TEST(ActivityDecoder, Memset) {
  MemsetActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  a.value = 0xab;
  a.bytes = 512;
  a.start = 5;
  a.end = 6;
  a.deviceId = 0;
  a.streamId = 3;
  a.correlationId = 11;
  a.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Memset m = DecodeMemset(a);
  EXPECT_EQ(m.value, 0xabu);
  EXPECT_EQ(m.bytes, 512u);
  EXPECT_EQ(m.stream_id, 3u);
  EXPECT_EQ(m.correlation_id, 11u);
  EXPECT_EQ(m.is_async, 1);
  EXPECT_EQ(m.mem_kind, MemKind::kDevice);
}

TEST(ActivityDecoder, MemoryAllocAndFree) {
  MemoryActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.correlationId = 21;
  a.address = 0x7f0000001000;
  a.bytes = 1 << 24;
  a.timestamp = 1234;
  a.deviceId = 1;
  a.streamId = 4;
  a.isAsync = 1;
  MemoryOp m = DecodeMemory(a);
  EXPECT_EQ(m.op, MemoryOpKind::kAlloc);
  EXPECT_EQ(m.mem_kind, MemKind::kDevice);
  EXPECT_EQ(m.address, 0x7f0000001000u);
  EXPECT_EQ(m.bytes, 1u << 24);
  EXPECT_EQ(m.ts_ns, 1234u);
  EXPECT_EQ(m.device_id, 1);
  EXPECT_EQ(m.stream_id, 4u);
  EXPECT_EQ(m.is_async, 1);
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  EXPECT_EQ(DecodeMemory(a).op, MemoryOpKind::kFree);
}

TEST(ActivityDecoder, SyncAndOverhead) {
  SyncActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 1;
  s.end = 9;
  s.correlationId = 31;
  s.contextId = 2;
  s.streamId = 6;
  Sync d = DecodeSync(s);
  EXPECT_EQ(d.kind, SyncKind::kStreamSynchronize);
  EXPECT_EQ(d.correlation_id, 31u);
  EXPECT_EQ(d.stream_id, 6u);
  EXPECT_EQ(d.context_id, 2u);
  EXPECT_EQ(d.end_ns - d.start_ns, 8u);

  OverheadActivity o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = 4321;
  o.start = 100;
  o.end = 150;
  Overhead ov = DecodeOverhead(o);
  EXPECT_EQ(ov.kind, OverheadKind::kActivityBufferRequest);
  EXPECT_EQ(ov.tid, 4321u);
  EXPECT_EQ(ov.start_ns, 100u);
  EXPECT_EQ(ov.end_ns, 150u);
  EXPECT_EQ(MapOverheadKind(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH), OverheadKind::kActivityBuffer);
  EXPECT_EQ(MapOverheadKind(CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT), OverheadKind::kOther);
}

TEST(ActivityDecoder, Device) {
  GpuBatch batch;
  DeviceActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  a.id = 0;
  a.name = "NVIDIA H200";
  a.globalMemorySize = 150ull << 30;
  a.computeCapabilityMajor = 9;
  a.computeCapabilityMinor = 0;
  a.numMultiprocessors = 132;
  a.maxThreadsPerBlock = 1024;
  a.maxWarpsPerMultiprocessor = 64;
  a.numThreadsPerWarp = 32;
  a.maxRegistersPerBlock = 65536;
  a.maxRegistersPerMultiprocessor = 65536;
  a.maxSharedMemoryPerBlock = 49152;
  a.maxSharedMemoryPerMultiprocessor = 233472;
  DeviceInfo d = DecodeDevice(a, &batch);
  EXPECT_EQ(batch.strings.Get(d.name), "NVIDIA H200");
  EXPECT_EQ(d.total_global_mem, 150ull << 30);
  EXPECT_EQ(d.compute_major, 9u);
  EXPECT_EQ(d.num_sms, 132u);
  EXPECT_EQ(d.max_threads_per_sm, 2048u);
  EXPECT_EQ(d.warp_size, 32u);
  EXPECT_EQ(d.max_shared_memory_per_sm, 233472u);
}

TEST(ActivityDecoder, DispatchCountsUnknownAndUncorrelated) {
  GpuBatch batch;
  KernelActivity k = MakeKernel(0, "orphan");
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&k), &batch);
  KernelActivity k2 = MakeKernel(5, "linked");
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&k2), &batch);
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_NAME;  // a kind we do not decode
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&api), &batch);
  EXPECT_EQ(batch.kernels.size(), 2u);
  EXPECT_EQ(batch.records_uncorrelated, 1u);
  EXPECT_EQ(batch.records_unknown_kind, 1u);
  DeviceActivity d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.name = "gpu";
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&d), &batch);
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&d), &batch);
  EXPECT_EQ(batch.devices.size(), 1u);
}

// A record CUPTI delivered with a zero start or an end before its start is dropped, not placed
// at the epoch, and counted; good records around it are kept.
TEST(ActivityDecoder, BrokenTimestampsAreDroppedAndCounted) {
  GpuBatch batch;
  KernelActivity zero_start = MakeKernel(7, "_Z4zerov");
  zero_start.start = 0;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&zero_start), &batch);
  EXPECT_TRUE(batch.kernels.empty());
  EXPECT_EQ(batch.records_broken, 1u);
  EXPECT_EQ(batch.records_uncorrelated, 0u);

  KernelActivity backwards = MakeKernel(8, "_Z4backv");
  backwards.end = backwards.start - 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&backwards), &batch);
  KernelActivity good = MakeKernel(9, "_Z4goodv");
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&good), &batch);
  ASSERT_EQ(batch.kernels.size(), 1u);
  EXPECT_EQ(batch.kernels[0].correlation_id, 9u);
  EXPECT_EQ(batch.records_broken, 2u);

  MemcpyActivity m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.correlationId = 10;
  m.end = 500;  // start 0
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&m), &batch);
  MemsetActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.correlationId = 11;
  s.start = 900;
  s.end = 800;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&s), &batch);
  SyncActivity y{};
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&y), &batch);
  OverheadActivity o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&o), &batch);
  // The sync and the overhead have no end time (0): unfinished records, their own counter.
  EXPECT_EQ(batch.records_incomplete, 2u);
  MemoryActivity mem{};
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.bytes = 64;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&mem), &batch);
  EXPECT_TRUE(batch.memcpys.empty());
  EXPECT_TRUE(batch.memsets.empty());
  EXPECT_TRUE(batch.syncs.empty());
  EXPECT_TRUE(batch.overheads.empty());
  EXPECT_TRUE(batch.memory_ops.empty());
  // zero start, backwards kernel, zero-start memcpy, backwards memset, zero memory timestamp.
  EXPECT_EQ(batch.records_broken, 5u);

  // A zero-length span at a real time is fine (a tiny memset can start and end on the same tick).
  s.start = 900;
  s.end = 900;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&s), &batch);
  EXPECT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.records_broken, 5u);
}

// A time past kMaxProfileTimeNs (the year 2116) is broken too: kept, one such record made the
// dump reader reject the whole profile (CheckProfile: "has a timestamp past the year 2116").
// Found by fuzz/activity_decoder_fuzz.
TEST(ActivityDecoder, TimesPastTheYear2116AreDroppedAndCounted) {
  GpuBatch batch;
  KernelActivity late_end = MakeKernel(7, "_Z4latev");
  late_end.end = kMaxProfileTimeNs;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&late_end), &batch);
  KernelActivity late = MakeKernel(8, "_Z4latev");
  late.start = kMaxProfileTimeNs;
  late.end = UINT64_MAX;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&late), &batch);
  MemsetActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.correlationId = 9;
  s.start = 900;
  s.end = kMaxProfileTimeNs + 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&s), &batch);
  MemoryActivity mem{};
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.timestamp = kMaxProfileTimeNs;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&mem), &batch);
  EXPECT_TRUE(batch.kernels.empty());
  EXPECT_TRUE(batch.memsets.empty());
  EXPECT_TRUE(batch.memory_ops.empty());
  EXPECT_EQ(batch.records_broken, 4u);

  // Just below the limit is a time like any other.
  KernelActivity last = MakeKernel(10, "_Z4lastv");
  last.start = kMaxProfileTimeNs - 2;
  last.end = kMaxProfileTimeNs - 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&last), &batch);
  mem.timestamp = kMaxProfileTimeNs - 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&mem), &batch);
  EXPECT_EQ(batch.kernels.size(), 1u);
  EXPECT_EQ(batch.memory_ops.size(), 1u);
  EXPECT_EQ(batch.records_broken, 4u);
}

// A copy, set or memory record sized at 256 TiB (kMaxRecordBytes) or more is broken: no device or
// host holds that much, and one such record made the dump reader reject the whole profile
// (CheckProfile: "has a size past 256 TiB"). Found by fuzz/dump_fuzz (the sums it overflowed).
TEST(ActivityDecoder, SizesPast256TiBAreDroppedAndCounted) {
  GpuBatch batch;
  MemsetActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.correlationId = 9;
  s.start = 900;
  s.end = 950;
  s.bytes = kMaxRecordBytes;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&s), &batch);
  MemoryActivity mem{};
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.timestamp = 1000;
  mem.bytes = UINT64_MAX;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&mem), &batch);
  EXPECT_TRUE(batch.memsets.empty());
  EXPECT_TRUE(batch.memory_ops.empty());
  EXPECT_EQ(batch.records_broken, 2u);

  s.bytes = kMaxRecordBytes - 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&s), &batch);
  mem.bytes = kMaxRecordBytes - 1;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&mem), &batch);
  EXPECT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.memory_ops.size(), 1u);
  EXPECT_EQ(batch.records_broken, 2u);
}

// A forced flush hands back work still running (cupti_activity.h, cuptiActivityFlushAll): its
// records have a start but no end yet. They are unfinished, not broken: gpu_records_incomplete,
// not a CUPTI error.
TEST(ActivityDecoder, UnfinishedRecordsAreCountedAsIncomplete) {
  GpuBatch batch;
  KernelActivity running = MakeKernel(7, "_Z7runningv");
  running.end = 0;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&running), &batch);
  KernelActivity queued = MakeKernel(8, "_Z6queuedv");
  queued.start = 0;
  queued.end = 0;
  DecodeRecord(reinterpret_cast<CUpti_Activity*>(&queued), &batch);
  EXPECT_TRUE(batch.kernels.empty());
  EXPECT_EQ(batch.records_incomplete, 2u);
  EXPECT_EQ(batch.records_broken, 0u);
}

using test_support::WalkPackedRecords;

TEST(ActivityDecoder, DecodeBufferWalksEveryRecord) {
  std::vector<uint8_t> buffer(4096, 0);
  size_t used = 0;
  KernelActivity k = MakeKernel(1, "k");
  MemcpyActivity m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.correlationId = 2;
  m.start = 4000;
  m.end = 4100;
  MemsetActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.correlationId = 3;
  s.start = 4200;
  s.end = 4250;
  std::memcpy(buffer.data() + used, &k, sizeof(k)); used += sizeof(k);
  std::memcpy(buffer.data() + used, &m, sizeof(m)); used += sizeof(m);
  std::memcpy(buffer.data() + used, &s, sizeof(s)); used += sizeof(s);
  GpuBatch batch;
  uint64_t errors = 0;
  EXPECT_EQ(DecodeBuffer(buffer.data(), used, &WalkPackedRecords, &batch, &errors), 3u);
  EXPECT_EQ(errors, 0u);
  ASSERT_EQ(batch.kernels.size(), 1u);
  ASSERT_EQ(batch.memcpys.size(), 1u);
  ASSERT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.memcpys[0].correlation_id, 2u);
  EXPECT_EQ(batch.memsets[0].correlation_id, 3u);

  // CUPTI_ERROR_INVALID_KIND ("activity record is either incomplete or invalid") stops the walk
  // and counts one incomplete record, not a CUPTI error.
  buffer[used] = 0xff;
  GpuBatch batch2;
  EXPECT_EQ(DecodeBuffer(buffer.data(), used + 8, &WalkPackedRecords, &batch2, &errors), 3u);
  EXPECT_EQ(batch2.records_incomplete, 1u);
  EXPECT_EQ(errors, 0u);

  // Any other failure of cuptiActivityGetNextRecord is a CUPTI error.
  GpuBatch batch3;
  const NextRecordFn failing = [](uint8_t*, size_t, CUpti_Activity**) {
    return CUPTI_ERROR_UNKNOWN;
  };
  EXPECT_EQ(DecodeBuffer(buffer.data(), used, failing, &batch3, &errors), 0u);
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(batch3.records_incomplete, 0u);
}

// One batch can take several buffers (a drain that waits): records accumulate, names and
// configurations stay shared across the buffers.
TEST(ActivityDecoder, OneBatchAcrossSeveralBuffers) {
  std::vector<uint8_t> buffer(64 * sizeof(KernelActivity), 0);
  GpuBatch batch;
  uint64_t errors = 0;
  for (uint32_t round = 0; round < 5; ++round) {
    size_t used = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      KernelActivity k = MakeKernel(round * 64 + i + 1, i % 2 ? "_Z3oddv" : "_Z4evenv");
      std::memcpy(buffer.data() + used, &k, sizeof(k));
      used += sizeof(k);
    }
    EXPECT_EQ(DecodeBuffer(buffer.data(), used, &WalkPackedRecords, &batch, &errors), 64u);
  }
  EXPECT_EQ(errors, 0u);
  ASSERT_EQ(batch.kernels.size(), 320u);
  EXPECT_EQ(batch.kernels.back().correlation_id, 320u);
  EXPECT_EQ(batch.strings.Get(batch.kernels.back().name), "_Z3oddv");
  EXPECT_EQ(batch.strings.size(), 3u);
  EXPECT_EQ(batch.launch_configs.size(), 1u);
}

// CUPTI 13.5 writes larger records than the 13.0 structs the decoder reads (cupti_activity.h of
// 13.5: Kernel13 is 248 bytes, Memcpy7 112, Memset5 104; 13.0's are 216, 96, 88), and
// cuptiActivityGetNextRecord steps by those sizes. The decoder reads each record's 13.0 prefix and
// never steps by its own sizeof: every field comes out as written, and the newer tail bytes (here
// 0xA5, as if set) are never read as a record.
size_t Cupti135Size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return 248;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return 112;
    case CUPTI_ACTIVITY_KIND_MEMSET: return 104;
    default: return 0;
  }
}
CUptiResult WalkCupti135Records(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t at = 0;
  if (*record != nullptr) {
    at = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
         Cupti135Size((*record)->kind);
  }
  if (at + sizeof(CUpti_ActivityKind) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + at);
  const size_t size = Cupti135Size(next->kind);
  if (size == 0) return CUPTI_ERROR_INVALID_KIND;
  if (at + size > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = next;
  return CUPTI_SUCCESS;
}

TEST(ActivityDecoder, LargerRecordsOfANewerCuptiAreReadByTheirPrefix) {
  alignas(8) uint8_t buffer[4096];
  std::memset(buffer, 0xA5, sizeof(buffer));
  size_t used = 0;
  auto put = [&](const void* record, size_t prefix, size_t size) {
    std::memcpy(buffer + used, record, prefix);  // bytes prefix..size keep 0xA5
    used += size;
  };
  for (uint32_t i = 0; i < 3; ++i) {
    KernelActivity k = MakeKernel(10 + i, "_Z4stepv");
    k.start = 1000 + 100 * i;
    k.end = 1050 + 100 * i;
    put(&k, sizeof(k), 248);
  }
  MemcpyActivity m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.bytes = 4;
  m.start = 2000;
  m.end = 2010;
  m.deviceId = 0;
  m.streamId = 7;
  m.correlationId = 20;
  put(&m, sizeof(m), 112);
  MemsetActivity s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0;
  s.bytes = 4;
  s.start = 900;
  s.end = 905;
  s.streamId = 7;
  s.correlationId = 5;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  put(&s, sizeof(s), 104);

  GpuBatch batch;
  uint64_t errors = 0;
  EXPECT_EQ(DecodeBuffer(buffer, used, &WalkCupti135Records, &batch, &errors), 5u);
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(batch.records_incomplete, 0u);
  EXPECT_EQ(batch.records_unknown_kind, 0u);
  ASSERT_EQ(batch.kernels.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const Kernel& k = batch.kernels[i];
    EXPECT_EQ(k.correlation_id, 10 + i);
    EXPECT_EQ(k.start_ns, 1000 + 100 * i);
    EXPECT_EQ(k.end_ns, 1050 + 100 * i);
    EXPECT_EQ(k.stream_id, 13u);
    EXPECT_EQ(batch.strings.Get(k.name), "_Z4stepv");
    const LaunchConfig& c = batch.launch_configs[k.launch_config];
    EXPECT_EQ(c.grid[0], 64u);
    EXPECT_EQ(c.grid[1], 2u);
    EXPECT_EQ(c.block[0], 256u);
    EXPECT_EQ(c.registers_per_thread, 40u);
    EXPECT_EQ(c.static_shared_bytes, 1024u);
    EXPECT_EQ(c.dynamic_shared_bytes, 4096u);
    EXPECT_EQ(c.graph_id, 3u);
    EXPECT_EQ(c.graph_node_id, 99u);
  }
  ASSERT_EQ(batch.memcpys.size(), 1u);
  EXPECT_EQ(batch.memcpys[0].kind, CopyKind::kDtoH);
  EXPECT_EQ(batch.memcpys[0].dst_kind, MemKind::kPageable);
  EXPECT_EQ(batch.memcpys[0].bytes, 4u);
  EXPECT_EQ(batch.memcpys[0].correlation_id, 20u);
  ASSERT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.memsets[0].bytes, 4u);
  EXPECT_EQ(batch.memsets[0].correlation_id, 5u);
  EXPECT_EQ(batch.memsets[0].mem_kind, MemKind::kDevice);
}

}  // namespace
}  // namespace gprof::collector
