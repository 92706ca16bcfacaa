#include "model/profile.h"

namespace gprof {

Profile::Profile() { domains.push_back(kNoString); }

}  // namespace gprof
