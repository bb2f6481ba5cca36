/* Runs the kstatus oracle (tests/oracle/kstatus, built by its `build` script) from a C unit test.
 * The binary's path comes from RUDDER_KSTATUS_ORACLE; a test that needs it fails loudly without it. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The oracle's path, or NULL after printing what is missing and how to get it. */
static inline const char *kstatus_oracle_path(void) {
  const char *p = getenv("RUDDER_KSTATUS_ORACLE");
  struct stat st;
  if (!p || !*p) {
    fprintf(stderr,
            "MISSING ORACLE: RUDDER_KSTATUS_ORACLE is not set. Build the kstatus oracle with\n"
            "  export RUDDER_KSTATUS_ORACLE=$(tests/oracle/kstatus/build)\n"
            "(needs Go and the Go module proxy; it caches under ~/.cache/rudder/oracle).\n");
    return NULL;
  }
  if (stat(p, &st) != 0 || !(st.st_mode & S_IXUSR)) {
    fprintf(stderr, "MISSING ORACLE: RUDDER_KSTATUS_ORACLE=%s is not an executable file; rebuild it with "
                    "tests/oracle/kstatus/build\n", p);
    return NULL;
  }
  return p;
}

static inline char *kstatus__slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0, r;
  char *b = malloc(cap + 1);
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
  return b;
}

/* Runs `oracle mode` with `in` (JSON lines) on stdin; returns its stdout (caller frees), or NULL
 * after copying the oracle's stderr to ours. */
static inline char *kstatus_oracle_run(const char *oracle, const char *mode, const char *in, size_t inlen) {
  char dir[] = "/tmp/rudder-kstatus-XXXXXX";
  if (!mkdtemp(dir)) return NULL;
  char fin[64], fout[64], ferr[64], cmd[1024];
  snprintf(fin, sizeof fin, "%s/in", dir);
  snprintf(fout, sizeof fout, "%s/out", dir);
  snprintf(ferr, sizeof ferr, "%s/err", dir);
  char *out = NULL;
  FILE *f = fopen(fin, "wb");
  if (f) {
    fwrite(in, 1, inlen, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' %s < '%s' > '%s' 2> '%s'", oracle, mode, fin, fout, ferr);
    int st = system(cmd);
    if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      out = kstatus__slurp(fout);
    } else {
      char *e = kstatus__slurp(ferr);
      fprintf(stderr, "kstatus oracle %s failed (status %d): %s\n", mode, st, e ? e : "");
      free(e);
    }
  }
  unlink(fin);
  unlink(fout);
  unlink(ferr);
  rmdir(dir);
  return out;
}
