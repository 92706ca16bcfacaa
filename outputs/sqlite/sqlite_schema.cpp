// [schema]'s CREATE TABLE statements (see sqlite_internal.h).
#include "outputs/sqlite/sqlite_export.h"
#include "outputs/sqlite/sqlite_internal.h"

#include <string_view>
#include <vector>

namespace gprof {
namespace sqlite_detail {


// The statements of [schema], verbatim, in its order. sqlite_export_test checks them against
// docs/nsys-sqlite-3.25.sql.
extern const std::vector<std::string_view> kSchema;
const std::vector<std::string_view> kSchema = {
    R"sql(CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
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
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    eventClass                  INTEGER   NOT NULL,
    globalTid                   INTEGER,
    correlationId               INTEGER,
    nameId                      INTEGER   NOT NULL,
    returnValue                 INTEGER   NOT NULL,
    callchainId                 INTEGER
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
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
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
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
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
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
))sql",
    R"sql(CREATE TABLE NVTX_EVENTS (
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
))sql",
    R"sql(CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,
    priority                    INTEGER,
    globalTid                   INTEGER
))sql",
    R"sql(CREATE TABLE PROCESSES (
    globalPid                   INTEGER,
    pid                         INTEGER,
    name                        TEXT
))sql",
    R"sql(CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,
    utcTime                     TEXT,
    localTime                   TEXT,
    systemClockNs               INTEGER
))sql",
    R"sql(CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_CUDA_MEM_KIND (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_CUPTI_SYNC_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE META_DATA_EXPORT (
    name                        TEXT      NOT NULL,
    value                       TEXT
))sql",
};

}  // namespace sqlite_detail

const std::vector<std::string_view>& SqliteExportSchema() { return sqlite_detail::kSchema; }

}  // namespace gprof
