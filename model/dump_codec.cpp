// The dump's checksum and blob sections (dump_codec.h).
#include "model/dump_codec.h"

#include <string>

namespace gprof {

uint64_t DumpChecksum(const void* data, size_t n) {
  dump_detail::Xxh64 h;
  h.Update(data, n);
  return h.Digest();
}

namespace dump_detail {

std::string EncodeInfo(const ProfileInfo& i) {
  BlobWriter w;
  w.Pod(i.pid); w.Pod(i.parent_pid);
  w.Str(i.program); w.Str(i.command_line); w.Str(i.hostname);
  w.Pod(i.start_ns); w.Pod(i.end_ns);
  w.Pod(i.rank); w.Pod(i.world_size);
  w.Pod(i.cycle); w.Pod(i.first_step); w.Pod(i.last_step);
  w.Pod(static_cast<uint8_t>(i.partial_window));
  w.Str(i.gpu_status); w.Str(i.cupti_library);
  w.Pod(i.cupti_clock_offset_ns); w.Pod(i.cupti_clock_window_ns);
  return w.str();
}

bool DecodeInfo(BlobReader r, ProfileInfo* i) {
  uint8_t partial = 0;
  bool ok = r.Pod(&i->pid) && r.Pod(&i->parent_pid) && r.Str(&i->program) &&
            r.Str(&i->command_line) && r.Str(&i->hostname) && r.Pod(&i->start_ns) &&
            r.Pod(&i->end_ns) && r.Pod(&i->rank) && r.Pod(&i->world_size) && r.Pod(&i->cycle) &&
            r.Pod(&i->first_step) && r.Pod(&i->last_step) && r.Pod(&partial) &&
            r.Str(&i->gpu_status) && r.Str(&i->cupti_library) &&
            r.Pod(&i->cupti_clock_offset_ns) && r.Pod(&i->cupti_clock_window_ns) && r.done();
  i->partial_window = partial != 0;
  return ok;
}

std::string EncodePlacement(const ProcessPlacement& p) {
  BlobWriter w;
  w.Pod(p.local_rank); w.Pod(p.node_rank);
  w.Str(p.boot_id);
  for (const ClockPair* c : {&p.clock_start, &p.clock_end}) {
    w.Pod(c->realtime_ns); w.Pod(c->monotonic_ns); w.Pod(c->read_ns);
  }
  w.Pod(static_cast<uint8_t>(p.ntp.known));
  w.Pod(p.ntp.state); w.Pod(p.ntp.status);
  w.Pod(p.ntp.offset_ns); w.Pod(p.ntp.maxerror_us); w.Pod(p.ntp.esterror_us);
  return w.str();
}

bool DecodePlacement(BlobReader r, ProcessPlacement* p) {
  bool ok = r.Pod(&p->local_rank) && r.Pod(&p->node_rank) && r.Str(&p->boot_id);
  for (ClockPair* c : {&p->clock_start, &p->clock_end}) {
    ok = ok && r.Pod(&c->realtime_ns) && r.Pod(&c->monotonic_ns) && r.Pod(&c->read_ns);
  }
  uint8_t known = 0;
  ok = ok && r.Pod(&known) && r.Pod(&p->ntp.state) && r.Pod(&p->ntp.status) &&
       r.Pod(&p->ntp.offset_ns) && r.Pod(&p->ntp.maxerror_us) && r.Pod(&p->ntp.esterror_us);
  p->ntp.known = known != 0;
  return ok;  // bytes after these: fields of a later version
}

// The strings from id `from` on (a segment writes only those its table gained).
std::string EncodeStrings(const StringTable& t, uint32_t from) {
  BlobWriter w;
  const uint32_t n = t.size() > from ? static_cast<uint32_t>(t.size()) - from : 0;
  w.Pod(n);
  for (StringId id = from; id < t.size(); ++id) w.Str(t.Get(id));
  return w.str();
}

// Appends to `t`, which holds `base` strings: the first decoded one gets id `base`.
bool DecodeStrings(BlobReader r, uint32_t base, StringTable* t) {
  uint32_t n = 0;
  // A fresh table already holds "" as id 0, which the first segment's strings start with.
  if (!r.Pod(&n) || (t->size() != base && !(base == 0 && t->size() == 1))) return false;
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (!r.Str(&s)) return false;
    // Ids must come back identical; a duplicate string would break that, so it is corruption.
    if (t->Intern(s) != base + i) return false;
  }
  return r.done();
}

}  // namespace dump_detail
}  // namespace gprof
