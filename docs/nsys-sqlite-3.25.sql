-- A verbatim copy of the team's shared reference formats/nsys-sqlite-3.25.sql (below this note), kept
-- here so that the SQLite export's tests (outputs/sqlite/sqlite_export_test.cpp) check the export against
-- it without reading anything outside the repository. docs/EXPORT.md says which of these tables and
-- columns gprof-run fills. Do not edit the statements: replace the whole file from a newer export.

-- Table and column names, types and enum values of an Nsight Systems SQLite export
-- (nsys 2026.2.1, EXPORT_SCHEMA_VERSION 3.25.0), read from a real export of an H100 run.
-- Reference for gprof-run's SQLite export: same names where we have the data.

CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    demangledName               INTEGER   NOT NULL,
    shortName                   INTEGER   NOT NULL,
    mangledName                 INTEGER,
    launchType                  INTEGER,
    cacheConfig                 INTEGER,
    registersPerThread          INTEGER   NOT NULL,
    gridX                       INTEGER   NOT NULL,
    gridY                       INTEGER   NOT NULL,
    gridZ                       INTEGER   NOT NULL,
    blockX                      INTEGER   NOT NULL,
    blockY                      INTEGER   NOT NULL,
    blockZ                      INTEGER   NOT NULL,
    staticSharedMemory          INTEGER   NOT NULL,
    dynamicSharedMemory         INTEGER   NOT NULL,
    localMemoryPerThread        INTEGER   NOT NULL,
    localMemoryTotal            INTEGER   NOT NULL,
    gridId                      INTEGER   NOT NULL,
    sharedMemoryExecuted        INTEGER,
    graphNodeId                 INTEGER,
    sharedMemoryLimitConfig     INTEGER,
    qmdBulkReleaseDone          INTEGER,
    qmdPreexitDone              INTEGER,
    qmdLastCtaDone              INTEGER,
    graphId                     INTEGER,
    clusterX                    INTEGER,
    clusterY                    INTEGER,
    clusterZ                    INTEGER,
    clusterSchedulingPolicy     INTEGER,
    maxPotentialClusterSize     INTEGER,
    maxActiveClusters           INTEGER,
    sharedMemoryRequestedPercentage   INTEGER,
    tensorSizeMinusOneElements   TEXT      NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    eventClass                  INTEGER   NOT NULL,
    globalTid                   INTEGER,
    correlationId               INTEGER,
    nameId                      INTEGER   NOT NULL,
    returnValue                 INTEGER   NOT NULL,
    callchainId                 INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    bytes                       INTEGER   NOT NULL,
    copyKind                    INTEGER   NOT NULL,
    deprecatedSrcId             INTEGER,
    srcKind                     INTEGER,
    dstKind                     INTEGER,
    srcDeviceId                 INTEGER,
    srcContextId                INTEGER,
    dstDeviceId                 INTEGER,
    dstContextId                INTEGER,
    migrationCause              INTEGER,
    graphNodeId                 INTEGER,
    virtualAddress              INTEGER,
    copyCount                   INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    value                       INTEGER   NOT NULL,
    bytes                       INTEGER   NOT NULL,
    graphNodeId                 INTEGER,
    memKind                     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    deprecatedSyncType          INTEGER,
    syncType                    INTEGER   NOT NULL,
    eventId                     INTEGER   NOT NULL,
    eventSyncId                 INTEGER
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,
    end                         INTEGER,
    eventType                   INTEGER   NOT NULL,
    rangeId                     INTEGER,
    category                    INTEGER,
    color                       INTEGER,
    text                        TEXT,
    globalTid                   INTEGER,
    endGlobalTid                INTEGER,
    textId                      INTEGER,
    domainId                    INTEGER,
    uint64Value                 INTEGER,
    int64Value                  INTEGER,
    doubleValue                 REAL,
    uint32Value                 INTEGER,
    int32Value                  INTEGER,
    floatValue                  REAL,
    jsonTextId                  INTEGER,
    jsonText                    TEXT,
    binaryData                  TEXT
);
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,
    priority                    INTEGER,
    globalTid                   INTEGER
);
CREATE TABLE PROCESSES (
    globalPid                   INTEGER,
    pid                         INTEGER,
    name                        TEXT
);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,
    utcTime                     TEXT,
    localTime                   TEXT,
    systemClockNs               INTEGER
);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE ENUM_CUDA_MEM_KIND (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE META_DATA_EXPORT (
    name                        TEXT      NOT NULL,
    value                       TEXT
);

-- ENUM_CUDA_MEMCPY_OPER (id|name|label)
--   0|CUDA_MEMCPY_KIND_UNKNOWN|Unknown
--   1|CUDA_MEMCPY_KIND_HTOD|Host-to-Device
--   2|CUDA_MEMCPY_KIND_DTOH|Device-to-Host
--   3|CUDA_MEMCPY_KIND_HTOA|Host-to-Array
--   4|CUDA_MEMCPY_KIND_ATOH|Array-to-Host
--   5|CUDA_MEMCPY_KIND_ATOA|Array-to-Array
--   6|CUDA_MEMCPY_KIND_ATOD|Array-to-Device
--   7|CUDA_MEMCPY_KIND_DTOA|Device-to-Array
--   8|CUDA_MEMCPY_KIND_DTOD|Device-to-Device
--   9|CUDA_MEMCPY_KIND_HTOH|Host-to-Host
--   10|CUDA_MEMCPY_KIND_PTOP|Peer-to-Peer
--   11|CUDA_MEMCPY_KIND_UVM_HTOD|Unified Host-to-Device
--   12|CUDA_MEMCPY_KIND_UVM_DTOH|Unified Device-to-Host
--   13|CUDA_MEMCPY_KIND_UVM_DTOD|Unified Device-to-Device
-- ENUM_CUDA_MEM_KIND (id|name|label)
--   0|CUDA_MEMOPR_MEMORY_KIND_PAGEABLE|Pageable
--   1|CUDA_MEMOPR_MEMORY_KIND_PINNED|Pinned
--   2|CUDA_MEMOPR_MEMORY_KIND_DEVICE|Device
--   3|CUDA_MEMOPR_MEMORY_KIND_ARRAY|Array
--   4|CUDA_MEMOPR_MEMORY_KIND_MANAGED|Managed
--   5|CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC|Device Static
--   6|CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC|Managed Static
--   7|CUDA_MEMOPR_MEMORY_KIND_UNKNOWN|Unknown
-- ENUM_CUPTI_SYNC_TYPE (id|name|label)
--   0|CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN|Unknown
--   1|CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE|Event sync
--   2|CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT|Stream wait sync
--   3|CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE|Stream sync
--   4|CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE|Context sync
-- ENUM_NSYS_EVENT_TYPE: the NVTX rows (id|name|label)
--   32|NvtxEvents|NvtxEvents
--   33|NvtxCategory|NvtxCategory
--   34|NvtxMark|NvtxMark
--   35|NvtxPushRange|NvtxPushRange
--   36|NvtxPopRange|NvtxPopRange
--   37|NvtxStartRange|NvtxStartRange
--   38|NvtxEndRange|NvtxEndRange
--   39|NvtxThread|NvtxThread
--   59|NvtxPushPopRange|NvtxPushPopRange
--   60|NvtxStartEndRange|NvtxStartEndRange
--   64|NvtxtCategory|NvtxtCategory
--   65|NvtxtMark|NvtxtMark
--   66|NvtxtPushRange|NvtxtPushRange
--   67|NvtxtPopRange|NvtxtPopRange
--   68|NvtxtStartRange|NvtxtStartRange
--   69|NvtxtEndRange|NvtxtEndRange
--   70|NvtxtPushPopRange|NvtxtPushPopRange
--   71|NvtxtStartEndRange|NvtxtStartEndRange
--   72|NvtxtMetaThread|NvtxtMetaThread
--   73|NvtxtMetaProcess|NvtxtMetaProcess
--   74|NvtxtMetaFileDisplay|NvtxtMetaFileDisplay
--   75|NvtxDomainCreate|NvtxDomainCreate
--   76|NvtxDomainDestroy|NvtxDomainDestroy
--   97|NvtxNameCudaDevice|NvtxNameCudaDevice
--   98|NvtxNameCudaContext|NvtxNameCudaContext
--   99|NvtxNameCudaStream|NvtxNameCudaStream
-- globalTid = (pid << 24) | tid in nsys's own scripts; globalPid = pid << 24
