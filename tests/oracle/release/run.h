/* Runs the Helm release oracle (tests/oracle/release, built by its `build` script) from a C unit test.
 * The binary's path comes from RUDDER_RELEASE_ORACLE; a test that needs it fails loudly without it. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The oracle's path, or NULL after printing what is missing and how to get it. */
static inline const char *oracle_path(void) {
  const char *p = getenv("RUDDER_RELEASE_ORACLE");
  struct stat st;
  if (!p || !*p) {
    fprintf(stderr,
            "MISSING ORACLE: RUDDER_RELEASE_ORACLE is not set. Build the Helm release oracle with\n"
            "  export RUDDER_RELEASE_ORACLE=$(tests/oracle/release/build)\n"
            "(needs Go and the Go module proxy; it caches under ~/.cache/rudder/oracle).\n");
    return NULL;
  }
  if (stat(p, &st) != 0 || !(st.st_mode & S_IXUSR)) {
    fprintf(stderr, "MISSING ORACLE: RUDDER_RELEASE_ORACLE=%s is not an executable file; rebuild it with "
                    "tests/oracle/release/build\n", p);
    return NULL;
  }
  return p;
}

static inline char *oracle__slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *b = malloc(cap + 1);
  size_t r;
  while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      char *nb = realloc(b, cap * 2 + 1);
      if (!nb) {
        free(b);
        b = NULL;
        break;
      }
      b = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (b) b[n] = 0;
  if (len) *len = n;
  return b;
}

/* Runs `oracle args` with input on stdin; *out gets stdout (caller frees). Returns the exit status
 * (-1 if it could not run); on failure the oracle's stderr is copied to ours. */
static inline int oracle_run(const char *oracle, const char *args, const char *in, size_t inlen, char **out,
                             size_t *outlen) {
  char dir[] = "/tmp/rudder-oracle-XXXXXX";
  *out = NULL;
  if (!mkdtemp(dir)) return -1;
  char fin[64], fout[64], ferr[64], cmd[1024];
  snprintf(fin, sizeof fin, "%s/in", dir);
  snprintf(fout, sizeof fout, "%s/out", dir);
  snprintf(ferr, sizeof ferr, "%s/err", dir);
  FILE *f = fopen(fin, "wb");
  int rc = -1;
  if (f) {
    fwrite(in, 1, inlen, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' %s < '%s' > '%s' 2> '%s'", oracle, args, fin, fout, ferr);
    int st = system(cmd);
    rc = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    *out = oracle__slurp(fout, outlen);
    if (rc != 0) {
      char *e = oracle__slurp(ferr, NULL);
      fprintf(stderr, "oracle %s failed (%d): %s\n", args, rc, e ? e : "");
      free(e);
    }
  }
  unlink(fin);
  unlink(fout);
  unlink(ferr);
  rmdir(dir);
  return rc;
}
