// Output directory: expands the -o template and claims a directory that holds no profile yet.
// Launcher process only.
//
// %p is the pid of the profiled program (as nsys does): the launcher forks first, expands the
// template with the child's pid, creates the directory, and only then lets the child exec.
#pragma once

#include <map>
#include <string>

namespace gprof::launcher {

inline constexpr const char* kDefaultOutputTemplate = "./gprof_traces/%n.%h.%p";
// The default when gprof-run itself is one rank of a job (`mpirun -n 4 gprof-run ./app`: the
// launcher's environment has a rank, config/rank_env.h): every rank's directory under one run
// directory, named by the job (%j), each named by rank and host (%h), so that ranks of jobs
// without a job id (%j is then the parent pid, which repeats across hosts) never collide on a
// shared filesystem.
inline constexpr const char* kDefaultRankOutputTemplate = "./gprof_traces/%n.%j/rank%r.%h";

struct TemplateValues {
  long pid = 0;
  long parent_pid = 0;                     // for %j without a job id
  std::string host;
  std::string program;                     // basename of the program as given
  std::map<std::string, std::string> env;  // for %q{VAR}, %r and %j; unset -> ""
};

// %r: the rank from `env` (RankFromEnv), zero-padded to the world size's width; "" without one.
std::string RankOf(const TemplateValues& values);
// %j: the job's id, the same in every rank of the job: SLURM_JOB_ID, TORCHELASTIC_RUN_ID,
// PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, first set wins; else "ppid<parent pid>" (ranks that
// one local mpirun or launcher process started share their parent).
std::string JobOf(const TemplateValues& values);

// The template when none is given: kDefaultRankOutputTemplate for a rank, else the default.
const char* DefaultOutputTemplate(const TemplateValues& values);

// Returns "" and sets `out`, or returns a message naming the bad template part.
std::string ExpandOutputTemplate(const std::string& templ, const TemplateValues& values,
                                 std::string* out);

// True when `dir` holds a profile: a dump, a gprof-run manifest, or a rendered table/trace.
bool HoldsProfile(const std::string& dir);

// Creates `dir` (and its parents) by the output rules of model/output_file.h (a planted link or
// another user's directory is refused) unless it already holds a profile; then tries dir-1, ...
// Returns "" and sets `chosen`, or returns why no directory could be created.
std::string ClaimOutputDir(const std::string& dir, std::string* chosen);

}  // namespace gprof::launcher
