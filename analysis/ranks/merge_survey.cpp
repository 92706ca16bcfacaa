// The survey of an input read segment by segment (see merge.h, AddSegmentToMerge): each
// segment's own summary (SummarizeForMerge) added into the input's.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "analysis/ranks/merge.h"

namespace gprof {
namespace {

void AddRows(std::vector<EventStats>&& from, std::vector<EventStats>* into) {
  using Key = std::tuple<std::string, std::string, std::vector<std::string>, RowKind, bool>;
  std::map<Key, size_t> at;
  for (size_t i = 0; i < into->size(); ++i) {
    const EventStats& r = (*into)[i];
    at.emplace(Key{r.name, r.input_shapes, r.stack, r.kind, r.device}, i);
  }
  for (EventStats& r : from) {
    const auto [it, fresh] = at.emplace(Key{r.name, r.input_shapes, r.stack, r.kind, r.device},
                                        into->size());
    if (fresh) {
      into->push_back(std::move(r));
      continue;
    }
    EventStats& t = (*into)[it->second];
    t.count += r.count;
    t.self_cpu_ns += r.self_cpu_ns, t.cpu_total_ns += r.cpu_total_ns;
    t.self_cuda_ns += r.self_cuda_ns, t.cuda_total_ns += r.cuda_total_ns;
    t.cpu_mem += r.cpu_mem, t.self_cpu_mem += r.self_cpu_mem;
    t.cuda_mem += r.cuda_mem, t.self_cuda_mem += r.self_cuda_mem;
    t.instances_ns.insert(t.instances_ns.end(), r.instances_ns.begin(), r.instances_ns.end());
  }
}

void AddDist(MergeDistSummary&& s, MergeDistSummary* d) {
  if (s.window_ns > 0) {
    const uint64_t end = std::max(d->window_start_ns + d->window_ns, s.window_start_ns + s.window_ns);
    if (d->window_ns == 0 || s.window_start_ns < d->window_start_ns) {
      d->window_start_ns = s.window_start_ns;
    }
    d->window_ns = end - d->window_start_ns;
  }
  if (s.gpu_work) {
    if (!d->gpu_work || s.busiest_device == d->busiest_device) {
      d->busiest_device = s.busiest_device;
      d->gpu_busy_ns += s.gpu_busy_ns;
    } else if (s.gpu_busy_ns > d->gpu_busy_ns) {  // another device: the busier segment's
      d->busiest_device = s.busiest_device;
      d->gpu_busy_ns = s.gpu_busy_ns;
    }
    d->gpu_work = true;
  }
  d->comm_kernels += s.comm_kernels;
  d->comm_ns += s.comm_ns, d->compute_ns += s.compute_ns, d->overlap_ns += s.overlap_ns;
  // By number, the first of a repeated number (a later segment's steps come after: appended).
  for (MergeStep& m : s.steps) {
    const auto at = std::lower_bound(
        d->steps.begin(), d->steps.end(), m.number,
        [](const MergeStep& o, uint32_t number) { return o.number < number; });
    if (at == d->steps.end() || at->number != m.number) d->steps.insert(at, m);
  }
}

void AddCollectives(std::vector<CollectiveEnds>&& from, std::vector<CollectiveEnds>* into) {
  for (CollectiveEnds& c : from) {
    auto it = std::find_if(into->begin(), into->end(), [&](const CollectiveEnds& o) {
      return o.name == c.name && o.kind == c.kind;
    });
    if (it == into->end()) {
      into->push_back(std::move(c));
      continue;
    }
    for (uint64_t e : c.ends) {
      if (it->ends.size() >= kMaxCollectiveEnds) break;
      it->ends.push_back(e);
    }
  }
}

}  // namespace

void AddSegmentToMerge(const Profile& segment, bool first, MergeInput* in) {
  MergeInput s = SummarizeForMerge(segment, in->file);
  if (first) {
    std::string file = std::move(in->file);
    *in = std::move(s);
    in->file = std::move(file);
    return;
  }
  in->info = std::move(s.info);  // the latest segment's: the run's end, counts so far
  if (s.events > 0) in->origin_ns = std::min(in->origin_ns, s.origin_ns);
  in->events += s.events;
  in->gpu = in->gpu || s.gpu;
  in->counters = s.counters;  // a segment reader's counters are summed over the segments
  AddRows(std::move(s.rows), &in->rows);
  AddDist(std::move(s.dist), &in->dist);
  AddCollectives(std::move(s.collectives), &in->collectives);
}

}  // namespace gprof
