/* What the C tests need of the system, on unix and on Windows: child
   processes (Windows has no fork: a child is the program run again with other
   arguments, on every system, so that the tests take one path everywhere),
   the environment, and the few POSIX file calls Windows spells otherwise.
   WASI (wasm32-wasi) has no processes: no child starts there. */
#ifndef B2ND_TEST_PORTABLE_H
#define B2ND_TEST_PORTABLE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <process.h>
#include <windows.h>
typedef intptr_t child_t;

static inline int setenv(const char *name, const char *value, int overwrite) {
  if (!overwrite && getenv(name) != NULL) return 0;
  return _putenv_s(name, value);
}
/* (An empty value removes the variable on Windows.) */
static inline int unsetenv(const char *name) { return _putenv_s(name, ""); }

#include <direct.h>
#include <io.h>
#include <sys/stat.h>
#include <sys/types.h>
#define mkdir(path, mode) _mkdir(path)
/* (no symbolic links to tell apart) */
#define lstat stat
static inline ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) {
  if (_lseeki64(fd, at, SEEK_SET) < 0) return -1;
  return _write(fd, buf, (unsigned)n);
}
#elif defined(__wasi__)
#include <unistd.h>
typedef int child_t;
#else
#include <sys/wait.h>
#include <unistd.h>
typedef pid_t child_t;
#endif

#include <fcntl.h>
#ifndef O_BINARY
#define O_BINARY 0
#endif

/* Run the program `self` (argv[0], or another build of the same test) as a
   child with the arguments `args` (NULL after the last one; `args[0]` is the
   program's name); -1 when it cannot start. */
static inline child_t spawn_self(const char *self, char *const *args) {
  fflush(stdout);
  fflush(stderr);
#ifdef _WIN32
  /* _spawnv joins the arguments with spaces: quote each. */
  char *quoted[16];
  int n = 0;
  for (; args[n] != NULL && n < 15; n++) {
    size_t len = strlen(args[n]) + 3;
    quoted[n] = malloc(len);
    snprintf(quoted[n], len, "\"%s\"", args[n]);
  }
  quoted[n] = NULL;
  child_t c = _spawnv(_P_NOWAIT, self, (const char *const *)quoted);
  for (int i = 0; i < n; i++) free(quoted[i]);
  return c;
#elif defined(__wasi__)
  (void)self;
  (void)args;
  return -1;
#else
  pid_t pid = fork();
  if (pid == 0) {
    execv(self, args);
    _exit(127);
  }
  return pid;
#endif
}

/* Whether the child ended (waiting for it unless `nohang`), with its exit
   code in `*code` (a death by a signal: 128 + the signal); -1 on an error. */
static inline int child_ended(child_t c, bool nohang, int *code) {
#ifdef _WIN32
  DWORD w = WaitForSingleObject((HANDLE)c, nohang ? 0 : INFINITE);
  if (w == WAIT_TIMEOUT) return 0;
  DWORD exit_code = 0;
  if (w != WAIT_OBJECT_0 || !GetExitCodeProcess((HANDLE)c, &exit_code)) return -1;
  CloseHandle((HANDLE)c);
  *code = (int)exit_code;
  return 1;
#elif defined(__wasi__)
  (void)c;
  (void)nohang;
  (void)code;
  return -1;
#else
  int status = 0;
  pid_t r = waitpid(c, &status, nohang ? WNOHANG : 0);
  if (r == 0) return 0;
  if (r != c) return -1;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return 1;
#endif
}

#endif
