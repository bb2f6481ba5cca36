/* libFuzzer target for the repository index parser (helm/source/index.h), with version choice
 * and chart URL resolution on what it keeps. Input: one byte choosing the chunk size, then the
 * index. The index is parsed twice with small limits, fed in one piece and in chunks; both
 * runs must agree exactly (same code, same message, same kept versions); a walk over the same
 * bytes (index_parser_new_walk) must hand over each asked-for chart exactly as the kept parser
 * keeps it whenever both succeed. Any crash, sanitizer
 * report, leak or disagreement is a bug.
 * Build and run: tests/fuzz/fuzz_source_index.sh (clang + libFuzzer); without libFuzzer,
 * build with -DFUZZ_STANDALONE and pass files to replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/source/index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"a", "nginx", "x", ""};

/* One line per version: what the walk and the kept parser are compared on. */
static void chart_line(const index_chart_t *c, buf_t *b) {
  buf_printf(b, "%s %zu %zu:", c->name, c->nversions, c->skipped);
  for (size_t i = 0; i < c->nversions; i++) {
    const index_version_t *v = &c->versions[i];
    buf_printf(b, " %s|%s|%s|%s|%s|%s|%zu|%zu|%zu|%zu|%zu", v->name, v->version, v->app_version, v->digest, v->icon,
               v->home, v->nurls, v->ndeps, v->nkeywords, v->nsources, v->nmaintainers);
  }
  buf_puts(b, "\n");
}

typedef struct walked_s {
  buf_t b[4];
  int seen[4];
} walked_t;

static int on_chart(const index_chart_t *c, void *data) {
  walked_t *w = data;
  for (size_t k = 0; k < 4; k++)
    if (!strcmp(c->name, names[k]) && !w->seen[k]++) chart_line(c, &w->b[k]);
  return 0;
}

static void walk_check(const uint8_t *data, size_t size, size_t chunk, const index_limits_t *lim,
                       const index_parser_t *kept) {
  walked_t w = {{BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT}, {0}};
  index_parser_t *p;
  char err[512] = "";
  if (index_parser_new_walk(lim, on_chart, &w, &p)) return;
  int rc = 0;
  for (size_t i = 0; i < size && !rc; i += chunk)
    rc = index_parser_feed(p, data + i, size - i < chunk ? size - i : chunk, err, sizeof err);
  if (!rc) rc = index_parser_finish(p, err, sizeof err);
  if (rc && !err[0]) abort();
  index_parser_free(p);
  for (size_t k = 0; !rc && k < 4; k++) {
    if (w.seen[k] > 1) continue; /* a name twice (JSON allows it): the kept parser merges them */
    const index_chart_t *c = index_parser_chart(kept, names[k]);
    buf_t want = BUF_INIT;
    if (c->present) chart_line(c, &want);
    if (want.len != w.b[k].len || (want.len && memcmp(want.data, w.b[k].data, want.len))) {
      fprintf(stderr, "walk:\n%s\nkept:\n%s\n", w.b[k].data ? w.b[k].data : "", want.data ? want.data : "");
      abort();
    }
    buf_free(&want);
  }
  for (size_t k = 0; k < 4; k++) buf_free(&w.b[k]);
}

static int run(const uint8_t *data, size_t size, size_t chunk, buf_t *sum) {
  index_limits_t lim = {.max_bytes = 1 << 20, .max_string = 256, .max_depth = 16, .max_versions = 2000,
                        .max_kept = 500, .max_list = 16, .window = 1024};
  index_parser_t *p;
  char err[512] = "";
  if (index_parser_new(names, 4, &lim, &p)) return -1;
  int rc = 0;
  for (size_t i = 0; i < size && !rc; i += chunk)
    rc = index_parser_feed(p, data + i, size - i < chunk ? size - i : chunk, err, sizeof err);
  if (!rc) rc = index_parser_finish(p, err, sizeof err);
  if (rc && !err[0]) abort(); /* an error always says what */
  buf_printf(sum, "rc=%d %s\n", rc, err);
  if (!rc) {
    walk_check(data, size, chunk, &lim, p);
    for (size_t k = 0; k < 4; k++) {
      const index_chart_t *c = index_parser_chart(p, names[k]);
      buf_printf(sum, "%s %d %zu %zu\n", c->name, c->present, c->nversions, c->skipped);
      for (size_t i = 0; i < c->nversions; i++) {
        const index_version_t *v = &c->versions[i];
        buf_printf(sum, " %s|%s|%s|%s|%zu|%zu\n", v->name, v->version, v->app_version, v->digest, v->nurls, v->ndeps);
        if (i && semver_compare(&c->versions[i - 1].sv, &v->sv) < 0) abort(); /* newest first */
        for (size_t u = 0; u < v->nurls; u++) {
          buf_t out = BUF_INIT;
          if (index_url_resolve("https://repo.example/charts", v->urls[u], &out, err, sizeof err) == 0)
            buf_printf(sum, "  %s\n", out.data ? out.data : "");
          buf_free(&out);
        }
      }
      static const char *const cons[] = {"", "^1", ">=0.0.0-0", "~1.2", "1.x || 2.x"};
      for (size_t q = 0; q < 5; q++) {
        const index_version_t *v;
        if (index_chart_select(c, cons[q], &v, err, sizeof err) == 0) buf_printf(sum, " -> %s\n", v->version);
        /* a constraint equal to a kept version picks that version */
        if (c->nversions && index_chart_select(c, c->versions[0].version, &v, err, sizeof err) == 0 &&
            strcmp(v->version, c->versions[0].version))
          abort();
      }
    }
  }
  index_parser_free(p);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  size_t chunk = 1 + data[0] % 64;
  buf_t a = BUF_INIT, b = BUF_INIT;
  run(data + 1, size - 1, size, &a);
  run(data + 1, size - 1, chunk, &b);
  if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))) {
    fprintf(stderr, "one piece:\n%s\nchunks of %zu:\n%s\n", a.data, chunk, b.data);
    abort();
  }
  buf_free(&a);
  buf_free(&b);
  return 0;
}

#ifdef FUZZ_STANDALONE
/* Replays files through the target: for builds without libFuzzer. */
static int replay(FILE *f) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *b = malloc(cap);
  if (!b) return 1;
  size_t r;
  while ((r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      uint8_t *nb = realloc(b, cap * 2);
      if (!nb) break;
      b = nb;
      cap *= 2;
    }
  }
  LLVMFuzzerTestOneInput(b, n);
  free(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return replay(stdin);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    replay(f);
    fclose(f);
  }
  printf("replayed %d inputs\n", argc - 1);
  return 0;
}
#endif
