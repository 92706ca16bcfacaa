// Enabling the API callbacks the session needs, per id (api_filter.h, BuildCallbackTable).
// Cold: Start only.
#include <algorithm>
#include <vector>

#include "collector/cupti/api_filter.h"
#include "collector/cupti/session_state.h"

namespace gprof::collector::session {

// Callbacks per id, not per domain (api_filter.h, BuildCallbackTable); a CUPTI without
// cuptiEnableCallback, or one that refuses an id, gets the whole domain.
CUptiResult EnableCallbacks(const CuptiApi& api, Session* s, const Config& config) {
  const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
  const std::vector<uint8_t>& driver_record = s->domains[kDriver].record;
  const bool driver_any =
      std::find(driver_record.begin(), driver_record.end(), 1) != driver_record.end();
  for (size_t d = 0; d < 2; ++d) {
    const DomainTables& t = s->domains[d];
    bool per_id = api.EnableCallback != nullptr;
    if (per_id) {
      const std::vector<uint8_t> on =
          BuildCallbackTable(t.record, t.names, d == kRuntime, driver_any, config);
      for (size_t cbid = 1; cbid < on.size() && per_id; ++cbid) {
        if (on[cbid] == 0) continue;
        per_id = api.EnableCallback(1, s->subscriber, domains[d],
                                    static_cast<CUpti_CallbackId>(cbid)) == CUPTI_SUCCESS;
      }
    }
    if (!per_id) {
      const CUptiResult rc = api.EnableDomain(1, s->subscriber, domains[d]);
      if (rc != CUPTI_SUCCESS) return rc;
    }
  }
  return CUPTI_SUCCESS;
}

}  // namespace gprof::collector::session
