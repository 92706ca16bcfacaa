/* enospc_shim.so: an LD_PRELOAD stand-in for a full disk (fault_matrix_test, docs/RELIABILITY.md
 * "full disk"). write(2) on a descriptor whose path contains ENOSPC_SHIM_MATCH (default
 * ".gpdump.tmp.": the dump being written) succeeds for the first ENOSPC_SHIM_BYTES bytes of each
 * such file (default 4096) and then fails with ENOSPC, as a filling disk does. The first
 * ENOSPC_SHIM_SKIP such files (default 0) are written whole: the disk fills later in the run.
 * Every other write, the program's own included, passes through untouched. Test-only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void*, size_t);
static char current[4096];      /* the target file being written */
static size_t current_bytes;    /* bytes of it written so far */
static long files_seen;

static long EnvLong(const char* name, long fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? strtol(v, NULL, 10) : fallback;
}

/* How many of `n` bytes this write to `fd` may write: n, fewer (the disk fills during it; a
 * short write, as the kernel makes), or 0 (full: ENOSPC). */
static size_t Allowed(int fd, size_t n) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t len = readlink(link, path, sizeof path - 1);
  if (len <= 0) return n;
  path[len] = '\0';
  const char* match = getenv("ENOSPC_SHIM_MATCH");
  if (strstr(path, match != NULL ? match : ".gpdump.tmp.") == NULL) return n;
  if (strcmp(path, current) != 0) {
    strcpy(current, path);
    current_bytes = 0;
    ++files_seen;
  }
  if (files_seen <= EnvLong("ENOSPC_SHIM_SKIP", 0)) return n;
  const size_t limit = (size_t)EnvLong("ENOSPC_SHIM_BYTES", 4096);
  const size_t room = current_bytes >= limit ? 0 : limit - current_bytes;
  const size_t take = n < room ? n : room;
  current_bytes += take;
  return take;
}

ssize_t write(int fd, const void* buf, size_t n) {
  if (real_write == NULL) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const size_t allowed = fd > 2 && n > 0 ? Allowed(fd, n) : n;
  if (allowed == 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_write(fd, buf, allowed);
}
