// A statically linked program (no libc.so.6 to find dlopen in) that the ptrace injector must
// refuse without touching it (launcher/ptrace_inject_test.cpp). Prints a line, then echoes
// stdin's lines until "quit".
#include <stdio.h>
#include <string.h>

int main(void) {
  char line[256];
  printf("attach_static ready\n");
  fflush(stdout);
  while (fgets(line, sizeof(line), stdin) != NULL) {
    if (strcmp(line, "quit\n") == 0) {
      printf("attach_static done\n");
      return 0;
    }
    printf("echo %s", line);
    fflush(stdout);
  }
  return 6;
}
