/* Differential corpus runner: reads the template oracle's JSON lines (inputs
 * and Go's result for each case), renders each case with rudder's template
 * engine and compares output and error text byte for byte.
 * Usage: tpl_corpus [-v] [-q] FILE.jsonl...   Prints "N passed, N failed". */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/release/release.h"
#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "helm/template/tpl_internal.h"

static int b64val(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

static void b64dec(const char *s, buf_t *out) {
  unsigned acc = 0;
  int bits = 0;
  for (; *s; s++) {
    int v = b64val((unsigned char)*s);
    if (v < 0) continue;
    acc = ((acc << 6) | (unsigned)v) & 0xFFFFFFu;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      buf_putc(out, (char)((acc >> bits) & 0xFF));
    }
  }
}

static void replace_no_value(buf_t *b) {
  size_t w = 0;
  for (size_t r = 0; r < b->len;) {
    if (b->len - r >= 10 && memcmp(b->data + r, "<no value>", 10) == 0) {
      r += 10;
      continue;
    }
    b->data[w++] = b->data[r++];
  }
  b->len = w;
  if (b->data) b->data[w] = 0;
}

static void show(const char *label, const char *s, size_t n) {
  fprintf(stderr, "  %s (%zu bytes): \"", label, n);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') fputs("\\n", stderr);
    else if (c == '"' || c == '\\') fprintf(stderr, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) fprintf(stderr, "\\x%02x", c);
    else fputc(c, stderr);
  }
  fputs("\"\n", stderr);
}

/* Replaces each byte of invalid UTF-8 in b with U+FFFD. */
static void go_json_utf8(buf_t *b) {
  buf_t o = BUF_INIT;
  for (size_t i = 0; i < b->len;) {
    int32_t r;
    size_t w = tpl__utf8_decode(b->data + i, b->len - i, &r);
    if (w == 1 && r == 0xFFFD) buf_puts(&o, "\xEF\xBF\xBD");
    else buf_append(&o, b->data + i, w);
    i += w;
  }
  buf_free(b);
  *b = o;
}

/* Runs one case; 1 when it matches the oracle. */
static int run_case(cJSON *c, int verbose, tpl_funcs_t *funcs) {
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
  const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(c, "mode"));
  const char *entry = cJSON_GetStringValue(cJSON_GetObjectItem(c, "entry"));
  cJSON *tpls = cJSON_GetObjectItem(c, "templates");
  cJSON *jout = cJSON_GetObjectItem(c, "output");
  cJSON *jout64 = cJSON_GetObjectItem(c, "output_b64");
  cJSON *jerr = cJSON_GetObjectItem(c, "error");
  buf_t want = BUF_INIT;
  if (jout) buf_puts(&want, cJSON_GetStringValue(jout));
  else if (jout64) b64dec(cJSON_GetStringValue(jout64), &want);
  const char *want_err = jerr ? cJSON_GetStringValue(jerr) : NULL;

  tpl_arena_t *a = tpl_arena_new(0);
  tpl_set_t *set = tpl_set_new(strcmp(mode, "go") ? funcs : NULL);
  buf_t out = BUF_INIT, err = BUF_INIT;
  int rc = 0;
  /* Re-encoded exactly (cJSON_Print rounds some doubles, e.g. 2^53, to 15 digits). */
  buf_t vj = BUF_INIT;
  tpl_value_t data;
  rc = release_go_json_append(&vj, cJSON_GetObjectItem(c, "values"));
  if (!rc) rc = tpl_value_from_json(a, vj.data, vj.len, &data, &err);
  buf_free(&vj);
  if (!rc) {
    cJSON *t;
    cJSON_ArrayForEach(t, tpls) {
      const char *tn = cJSON_GetStringValue(cJSON_GetArrayItem(t, 0));
      const char *tt = cJSON_GetStringValue(cJSON_GetArrayItem(t, 1));
      rc = tpl_set_parse(set, tn, tt, strlen(tt), &err);
      if (rc) break;
    }
  }
  if (!rc) {
    tpl_exec_opts_t o = {0};
    tpl_helm_state_t *hs = calloc(1, sizeof(*hs));
    o.udata = hs;
    if (!strcmp(mode, "helm")) o.missingkey = TPL_MISSINGKEY_ZERO;
    else if (!strcmp(mode, "strict")) o.missingkey = TPL_MISSINGKEY_ERROR;
    rc = tpl_set_execute(set, entry, data, a, &o, &out, &err);
    free(hs);
    if (!rc && !strcmp(mode, "helm")) replace_no_value(&out);
  }
  int ok;
  if (want_err) {
    /* the oracle's JSON holds each byte of invalid UTF-8 as U+FFFD, as Go's encoder writes it */
    if (rc) go_json_utf8(&err);
    ok = rc != 0 && err.data && strcmp(err.data, want_err) == 0;
  } else {
    ok = rc == 0 && out.len == want.len && (out.len == 0 || memcmp(out.data, want.data, out.len) == 0);
  }
  if (!ok && verbose) {
    fprintf(stderr, "FAIL %s\n", name);
    if (want_err) show("want error", want_err, strlen(want_err));
    else show("want output", want.data ? want.data : "", want.len);
    if (rc) show("got error", err.data ? err.data : "", err.len);
    else show("got output", out.data ? out.data : "", out.len);
  }
  buf_free(&out);
  buf_free(&err);
  buf_free(&want);
  tpl_set_free(set);
  tpl_arena_free(a);
  return ok;
}

int main(int argc, char **argv) {
  int verbose = 1, passed = 0, failed = 0;
  tpl_funcs_t *funcs = tpl_funcs_new();
  if (!funcs || tpl_helm_funcs_add(funcs) || sprig_funcs_add(funcs)) {
    fprintf(stderr, "tpl_corpus: cannot build the function table\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-q")) {
      verbose = 0;
      continue;
    }
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "tpl_corpus: cannot open %s\n", argv[i]);
      return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
      cJSON *c = cJSON_ParseWithLength(line, (size_t)n);
      if (!c) {
        fprintf(stderr, "tpl_corpus: %s: bad JSON line\n", argv[i]);
        failed++;
        continue;
      }
      if (run_case(c, verbose, funcs)) passed++;
      else failed++;
      cJSON_Delete(c);
    }
    free(line);
    fclose(f);
  }
  tpl_funcs_free(funcs);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
