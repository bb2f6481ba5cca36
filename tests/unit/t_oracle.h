/* Helpers for tests that compare random outputs (keys, certificates) with the Go template
 * oracle (tests/oracle/template): files in a scratch directory, shell commands run there,
 * Go string literals, and one oracle run over many one-template cases. */
#pragma once
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* Writes s[0..n) to dir/name. */
static inline void t_put(const char *dir, const char *name, const char *s, size_t n) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) return;
  fwrite(s, 1, n, f);
  fclose(f);
}

/* Reads a stream to its end into a NUL-terminated malloc'd string. */
static inline char *t_read_all(FILE *f) {
  buf_t b = BUF_INIT;
  char tmp[8192];
  size_t k;
  while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) buf_append(&b, tmp, k);
  buf_putc(&b, 0);
  return b.data;
}

/* dir/name's text (malloc'd), NULL when it cannot be read. */
static inline char *t_slurp(const char *dir, const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "r");
  if (!f) return NULL;
  char *s = t_read_all(f);
  fclose(f);
  return s;
}

/* Runs a shell command in dir; its stdout and stderr (malloc'd), NULL when it failed. */
static inline char *t_sh(const char *dir, const char *cmd) {
  buf_t full = BUF_INIT;
  buf_printf(&full, "cd %s && %s 2>&1", dir, cmd);
  buf_putc(&full, 0);
  FILE *p = popen(full.data, "r");
  buf_free(&full);
  if (!p) return NULL;
  char *s = t_read_all(p);
  if (pclose(p) != 0) {
    fprintf(stderr, "command failed: %s\n%s\n", cmd, s ? s : "");
    free(s);
    return NULL;
  }
  return s;
}

/* s as a Go string literal (for keys and certificates inside template text). */
static inline char *t_golit(const char *s) {
  buf_t b = BUF_INIT;
  buf_putc(&b, '"');
  for (; s && *s; s++) {
    if (*s == '\n') buf_puts(&b, "\\n");
    else if (*s == '"' || *s == '\\') buf_putc(&b, '\\'), buf_putc(&b, *s);
    else buf_putc(&b, *s);
  }
  buf_putc(&b, '"');
  buf_putc(&b, 0);
  return b.data;
}

/* Runs the Go template oracle on templates[0..n) (one case each, Helm's mode, no values):
 * out[i] gets the output or NULL, err[i] the error or NULL (both malloc'd). 0, or -1 when the
 * oracle cannot be built or did not answer every case. */
/* Builds the Go template oracle (tests/oracle/template/build.sh); its path in bin. 0, or -1
 * with the reason on stderr. */
static inline int t_oracle_build(char *bin, size_t cap) {
  const char *src = getenv("RUDDER_SOURCE_DIR");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s/tests/oracle/template/build.sh", src ? src : ".");
  FILE *p = popen(cmd, "r");
  if (!p || !fgets(bin, (int)cap, p)) bin[0] = 0;
  int st = p ? pclose(p) : -1;
  bin[strcspn(bin, "\n")] = 0;
  if (st != 0 || !bin[0]) {
    fprintf(stderr, "FAIL: could not build the Go template oracle (needs Go): %s\n", cmd);
    return -1;
  }
  return 0;
}

static inline int t_oracle_run(const char *dir, size_t n, char *const *templates, char **out, char **err) {
  char cmd[2048], bin[1024];
  if (t_oracle_build(bin, sizeof bin)) return -1;
  buf_t tc = BUF_INIT;
  for (size_t i = 0; i < n; i++) buf_printf(&tc, "=== c%zu\n--- template t\n%s\n", i, templates[i]);
  t_put(dir, "oracle.tcase", tc.data, tc.len);
  buf_free(&tc);
  snprintf(cmd, sizeof cmd, "'%s' %s/oracle.tcase", bin, dir);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char *all = t_read_all(p);
  int st = pclose(p);
  for (size_t i = 0; i < n; i++) out[i] = err[i] = NULL;
  size_t seen = 0;
  for (char *line = all, *nl; line && *line; line = nl ? nl + 1 : NULL) {
    nl = strchr(line, '\n');
    if (nl) *nl = 0;
    cJSON *j = cJSON_Parse(line);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(j, "name"));
    size_t i = name && name[0] == 'c' ? (size_t)strtoul(name + 1, NULL, 10) : n;
    if (i < n) {
      const char *o = cJSON_GetStringValue(cJSON_GetObjectItem(j, "output"));
      const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(j, "error"));
      out[i] = o ? strdup(o) : NULL;
      err[i] = e ? strdup(e) : NULL;
      seen++;
    }
    cJSON_Delete(j);
  }
  free(all);
  if (st != 0 || seen != n) {
    fprintf(stderr, "FAIL: the oracle answered %zu of %zu cases (status %d)\n", seen, n, st);
    return -1;
  }
  return 0;
}
