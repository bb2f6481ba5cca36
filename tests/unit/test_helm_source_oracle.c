/* Version selection, chart URL resolution and OCI tag choice against Helm v4's own code (the Go
 * oracle in tests/oracle/source): a generated index and generated constraints, asked of both. The
 * oracle's path comes from RUDDER_SOURCE_ORACLE; without it the test fails, saying how to build it. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helm/source/index.h"
#include "helm/source/oci.h"
#include "tests/oracle/release/run.h"
#include "t.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng % n);
}

static const char *source_oracle(void) {
  const char *p = getenv("RUDDER_SOURCE_ORACLE");
  struct stat st;
  if (!p || !*p || stat(p, &st) != 0 || !(st.st_mode & S_IXUSR)) {
    fprintf(stderr, "MISSING ORACLE: RUDDER_SOURCE_ORACLE is %s. Build the chart-source oracle with\n"
                    "  export RUDDER_SOURCE_ORACLE=$(tests/oracle/source/build)\n"
                    "(needs Go and the Go module proxy; it caches under ~/.cache/rudder/oracle).\n",
            p && *p ? "not an executable file" : "not set");
    return NULL;
  }
  return p;
}

/* A random version text: mostly valid semver of several shapes, some invalid. */
static void gen_version(buf_t *b, bool strict) {
  unsigned shape = rnd(20);
  if (!strict && shape == 0) {
    static const char *const bad[] = {"1.2.3.4", "abc", "1.02.3", "", "1.2.3-", "01.2.3", "1.2.3+"};
    buf_puts(b, bad[rnd(7)]);
    return;
  }
  if (!strict && shape == 1) buf_putc(b, 'v');
  buf_printf(b, "%u", rnd(4));
  if (strict || shape != 2) buf_printf(b, ".%u", rnd(12));
  if (strict || (shape != 2 && shape != 3)) buf_printf(b, ".%u", rnd(12));
  if (rnd(4) == 0) {
    static const char *const pre[] = {"alpha", "beta.1", "rc.1", "rc.2", "0", "1", "alpha.beta", "x-y"};
    buf_printf(b, "-%s", pre[rnd(8)]);
  }
  if (rnd(8) == 0) buf_printf(b, strict ? "_build.%u" : "+build.%u", rnd(3));
}

static void gen_constraint(buf_t *b) {
  static const char *const ops[] = {"", "=", "!=", ">", "<", ">=", "<=", "~", "^", "~>", "=>", "=<"};
  unsigned kind = rnd(30);
  if (kind == 0) return; /* "" */
  if (kind == 1) {
    buf_puts(b, rnd(2) ? "*" : "x");
    return;
  }
  if (kind == 2) {
    static const char *const bad[] = {"zz", ">>1", "1.2.3.4", "^", "1 - ", "||", "~1.x.3"};
    buf_puts(b, bad[rnd(7)]);
    return;
  }
  unsigned groups = 1 + (rnd(4) == 0);
  for (unsigned g = 0; g < groups; g++) {
    if (g) buf_puts(b, " || ");
    if (rnd(10) == 0) {
      buf_printf(b, "%u.%u - %u.%u.%u", rnd(3), rnd(12), 1 + rnd(3), rnd(12), rnd(12));
      continue;
    }
    unsigned terms = 1 + (rnd(3) == 0);
    for (unsigned t = 0; t < terms; t++) {
      if (t) buf_puts(b, rnd(2) ? ", " : " ");
      buf_puts(b, ops[rnd(12)]);
      if (rnd(6) == 0) buf_putc(b, ' ');
      unsigned parts = 1 + rnd(3);
      for (unsigned k = 0; k < parts; k++) {
        if (k) buf_putc(b, '.');
        if (k && rnd(6) == 0) buf_putc(b, "xX*"[rnd(3)]);
        else buf_printf(b, "%u", rnd(k ? 12 : 4));
      }
      if (parts == 3 && rnd(5) == 0) buf_printf(b, "-%s", rnd(2) ? "0" : "rc.1");
    }
  }
}

static int lines_cmp(const char *what, const char *questions, const char *ours, const char *go) {
  int bad = 0;
  const char *q = questions, *o = ours, *g = go;
  size_t n = 0, oks = 0;
  while (*q) {
    const char *qe = strchr(q, '\n'), *oe = strchr(o, '\n'), *ge = strchr(g, '\n');
    if (!qe || !oe || !ge) {
      fprintf(stderr, "%s: answers end early at question %zu\n", what, n);
      return bad + 1;
    }
    if ((size_t)(oe - o) != (size_t)(ge - g) || memcmp(o, g, (size_t)(oe - o))) {
      if (bad++ < 10)
        fprintf(stderr, "%s: question \"%.*s\":\n  rudder: %.*s\n  helm:   %.*s\n", what, (int)(qe - q), q,
                (int)(oe - o), o, (int)(ge - g), g);
    }
    if (!strncmp(g, "OK", 2)) oks++;
    q = qe + 1, o = oe + 1, g = ge + 1, n++;
  }
  fprintf(stderr, "%s: %zu questions (%zu answered with a version or URL), %d differ\n", what, n, oks, bad);
  return bad;
}

static void test_index(const char *oracle) {
  static const char *const charts[] = {"app", "small", "tiny", "empty", "absent"};
  buf_t idx = BUF_INIT;
  buf_puts(&idx, "apiVersion: v1\nentries:\n");
  /* app: 400 versions, no two equal in semver (Go's sort is not stable past 12 elements);
   * small: 10 with ties (insertion sort there: stable); tiny: 1; empty: only invalid ones */
  for (int c = 0; c < 4; c++) {
    buf_printf(&idx, "  %s:\n", charts[c]);
    size_t n = c == 0 ? 400 : c == 1 ? 10 : c == 2 ? 1 : 3;
    buf_t seen = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
      buf_t v = BUF_INIT;
      if (c == 3) buf_puts(&v, i ? "bad" : "1.2.3.4");
      else {
        gen_version(&v, false);
        if (c == 0) {
          /* refuse versions equal in semver to one already there */
          semver_t sv;
          buf_t e = BUF_INIT;
          bool dup = false;
          if (semver_parse(v.data, v.len, &sv, &e) == 0) {
            buf_t norm = BUF_INIT;
            semver_t bare = sv;
            bare.nmeta = 0;
            semver_format(&norm, &bare);
            buf_putc(&norm, '\n');
            char *hit = seen.data ? strstr(seen.data, norm.data) : NULL;
            dup = hit && (hit == seen.data || hit[-1] == '\n');
            if (!dup) buf_append(&seen, norm.data, norm.len);
            buf_free(&norm);
          }
          buf_free(&e);
          if (dup) {
            buf_free(&v);
            i--;
            continue;
          }
        }
      }
      buf_printf(&idx, "  - name: %s\n    version: '%s'\n    urls: [%s-%s.tgz]\n", charts[c], v.data ? v.data : "",
                 charts[c], v.data ? v.data : "");
      buf_free(&v);
    }
    buf_free(&seen);
  }
  char path[] = "/tmp/rudder-index-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK_EQ_INT(write(fd, idx.data, idx.len), (long long)idx.len);
  close(fd);

  /* questions: generated constraints, and every version string of app as written */
  buf_t qs = BUF_INIT;
  for (int i = 0; i < 3000; i++) {
    buf_printf(&qs, "%s\t", charts[i < 2600 ? 0 : 1 + rnd(4)]);
    gen_constraint(&qs);
    buf_putc(&qs, '\n');
  }
  index_parser_t *p;
  char err[512];
  CHECK_EQ_INT(index_parser_new(charts, 5, NULL, &p), 0);
  for (size_t i = 0; i < idx.len; i += 4096)
    CHECK_EQ_INT(index_parser_feed(p, idx.data + i, idx.len - i < 4096 ? idx.len - i : 4096, err, sizeof err), 0);
  CHECK_EQ_INT(index_parser_finish(p, err, sizeof err), 0);
  const index_chart_t *app = index_parser_chart(p, "app");
  for (size_t i = 0; i < app->nversions; i += 7) buf_printf(&qs, "app\t%s\n", app->versions[i].version);

  buf_t ours = BUF_INIT;
  for (const char *q = qs.data; *q;) {
    const char *tab = strchr(q, '\t'), *nl = strchr(tab, '\n');
    char name[32], con[128];
    snprintf(name, sizeof name, "%.*s", (int)(tab - q), q);
    snprintf(con, sizeof con, "%.*s", (int)(nl - tab - 1), tab + 1);
    const index_version_t *v;
    int rc = index_chart_select(index_parser_chart(p, name), con, &v, err, sizeof err);
    if (rc) buf_printf(&ours, "ERR\t%s\n", err);
    else buf_printf(&ours, "OK\t%s\n", v->version);
    q = nl + 1;
  }
  char args[128];
  snprintf(args, sizeof args, "index %s", path);
  char *go = NULL;
  size_t gon;
  CHECK_EQ_INT(oracle_run(oracle, args, qs.data, qs.len, &go, &gon), 0);
  if (go) CHECK_EQ_INT(lines_cmp("index", qs.data, ours.data, go), 0);
  free(go);
  unlink(path);
  index_parser_free(p);
  buf_free(&idx), buf_free(&qs), buf_free(&ours);
}

/* Which versions survive Helm's validation, in which order, and which whole indexes load. */
static const char *const EDGE =
    "apiVersion: v1\nentries:\n  edge:\n"
    "  - {name: edge, version: 1.0.0}\n"
    "  - {name: edge, version: v1.1}\n"
    "  - {name: edge, version: '2'}\n"
    "  - {name: edge, version: 1.0.0-rc.1}\n"
    "  - {name: edge, version: 1.0.0.0}\n"
    "  - {name: edge, version: ''}\n"
    "  - {name: edge}\n"
    "  - {version: 3.0.0}\n"
    "  - {name: '', version: 3.0.1}\n"
    "  - {name: ., version: 3.0.2}\n"
    "  - {name: .., version: 3.0.3}\n"
    "  - {name: a/b, version: 3.0.4}\n"
    "  - {name: 'a\\tb', version: 3.0.5}\n"
    "  - {name: x, version: 3.0.6, type: library}\n"
    "  - {name: x, version: 3.0.7, type: Application}\n"
    "  - {name: x, version: 3.0.8, type: ''}\n"
    "  - {name: x, version: 3.0.9, apiVersion: v3}\n"
    "  - {name: x, version: 4.0.0, dependencies: [{name: a, alias: ok_-1}]}\n"
    "  - {name: x, version: 4.0.1, dependencies: [{name: a, alias: 'no.dots'}]}\n"
    "  - {name: x, version: 4.0.2, dependencies: [null]}\n"
    "  - {name: x, version: 4.0.3, dependencies: [{name: a}, {name: a}]}\n"
    "  - {name: x, version: 4.0.4, maintainers: [null]}\n"
    "  - {name: x, version: 4.0.5, maintainers: [{name: m, email: e, url: u}]}\n"
    "  - {name: x, version: 4.0.6, deprecated: true, removed: true, checksum: c, engine: e, tillerVersion: t, url: u}\n"
    "  - null\n"
    "  - {name: x, version: 1.0.0-alpha}\n"
    "  - {name: x, version: 1.0.0-alpha.1}\n"
    "  - {name: x, version: 1.0.0-0}\n"
    "  - {name: x, version: 1.0.0-beta.11}\n"
    "  - {name: x, version: 1.0.0-beta.2}\n"
    "  empty: []\n  nothing:\n"
    /* versions equal in semver: Go's sort keeps their order only up to 12 versions (insertion
     * sort); beyond that its order is its own, and rudder keeps the index's */
    "  ties:\n"
    "  - {name: t, version: 1.0.0}\n  - {name: t, version: 2.0.0}\n  - {name: t, version: 1.0.0+meta}\n"
    "  - {name: t, version: 01.0.0}\n  - {name: t, version: v1.0.0}\n  - {name: t, version: 1.0.0+b}\n";

static void test_validation(const char *oracle) {
  static const char *const charts[] = {"edge", "empty", "nothing", "absent", "ties"};
  char path[] = "/tmp/rudder-index-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK_EQ_INT(write(fd, EDGE, strlen(EDGE)), (long long)strlen(EDGE));
  close(fd);
  index_parser_t *p;
  char err[512];
  CHECK_EQ_INT(index_parser_new(charts, 5, NULL, &p), 0);
  CHECK_EQ_INT(index_parser_feed(p, EDGE, strlen(EDGE), err, sizeof err), 0);
  CHECK_EQ_INT(index_parser_finish(p, err, sizeof err), 0);
  buf_t qs = BUF_INIT, ours = BUF_INIT;
  for (int i = 0; i < 5; i++) {
    buf_printf(&qs, "%s\t\n", charts[i]);
    const index_chart_t *c = index_parser_chart(p, charts[i]);
    if (!c->present) {
      buf_puts(&ours, "ERR\tno chart name found\n");
      continue;
    }
    buf_puts(&ours, "OK\t");
    for (size_t k = 0; k < c->nversions; k++) buf_printf(&ours, "%s%s", k ? " " : "", c->versions[k].version);
    buf_putc(&ours, '\n');
  }
  char args[128], *go = NULL;
  size_t gon;
  snprintf(args, sizeof args, "list %s", path);
  CHECK_EQ_INT(oracle_run(oracle, args, qs.data, qs.len, &go, &gon), 0);
  if (go) CHECK_EQ_INT(lines_cmp("list", qs.data, ours.data, go), 0);
  free(go);
  index_parser_free(p);
  buf_free(&qs), buf_free(&ours);

  /* whole indexes: loads or not, as Helm */
  static const char *const docs[] = {
      "apiVersion: v1\nentries: {}\n",
      "apiVersion: v1\n",
      "entries: {}\n",
      "",
      "   \n",
      "apiVersion: v1\nbogus: 1\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, bogus: 1}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, dependencies: [{name: b, bogus: 1}]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, maintainers: [{name: b, bogus: 1}]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, name: b}\n",
      "apiVersion: v1\napiVersion: v2\n",
      /* not compared: an alias (refused by rudder, expanded by Go) and a chart name given
       * twice when nobody asked for it (unnoticed by rudder, which keeps no set of all names) */
      "apiVersion: v1\nentries:\n  a: 3\n",
      "apiVersion: v1\nentries: [a]\n",
      "apiVersion: v1\nentries:\n  a:\n  - 3\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, urls: a}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: [a]}\n",
      "- a\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, annotations: [x]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, keywords: k}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, home: [h]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, maintainers: [[m]]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, dependencies: [{name: [b]}]}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, dependencies: [{name: b, tags: [t], "
      "import-values: [i], enabled: true}]}\n",
      "{\"apiVersion\": \"v1\", \"bogus\": 1, \"entries\": {\"a\": [{\"name\": \"a\", \"version\": \"1.0.0\", \"x\": 1}]}}",
      "{\"entries\": {}}",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0\n",
      "apiVersion: v1\ngenerated: 2026-01-01T00:00:00Z\nserverInfo: {contextPath: /x}\nannotations: {a: b}\n"
      "publicKeys: [k]\nentries: {}\n",
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, deprecated: true, annotations: {a: b}, "
      "keywords: [k], sources: [s], home: h, icon: i, condition: c, tags: t, description: d, created: "
      "'2026-01-01T00:00:00Z', digest: d, kubeVersion: '>=1', appVersion: '1'}\n",
      "apiVersion: v1\n---\nbogus: 1\n",
  };
  int differ = 0;
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK_EQ_INT(write(fd, docs[i], strlen(docs[i])), (long long)strlen(docs[i]));
    close(fd);
    snprintf(args, sizeof args, "load %s", path);
    go = NULL;
    CHECK_EQ_INT(oracle_run(oracle, args, "", 0, &go, &gon), 0);
    CHECK_EQ_INT(index_parser_new(charts, 4, NULL, &p), 0);
    int rc = index_parser_feed(p, docs[i], strlen(docs[i]), err, sizeof err);
    if (!rc) rc = index_parser_finish(p, err, sizeof err);
    index_parser_free(p);
    bool go_ok = go && !strncmp(go, "OK", 2);
    if (go_ok != (rc == 0)) {
      if (differ++ < 10)
        fprintf(stderr, "load: index %zu loads in %s but not in %s:\n%s\n  rudder: %s\n  helm:   %s\n", i,
                go_ok ? "helm" : "rudder", go_ok ? "rudder" : "helm", docs[i], rc ? err : "OK", go ? go : "");
    }
    free(go);
  }
  fprintf(stderr, "load: %zu indexes, %d differ\n", sizeof docs / sizeof docs[0], differ);
  CHECK_EQ_INT(differ, 0);
  unlink(path);
}

static void test_urls(const char *oracle) {
  static const char *const bases[] = {"https://h/charts", "https://h/charts/", "https://h", "http://h:8080/a/b/",
                                      "https://u:p@h/x?token=abc", "HTTPS://H/x", "https://h/a%20b/",
                                      "https://h/x/#f", "https://h/x/?"};
  static const char *const refs[] = {"a-1.0.0.tgz", "charts/a.tgz", "../a.tgz", "../../../a.tgz", "/abs/a.tgz",
                                     "./a.tgz", "a.tgz?x=1", "//mirror/a.tgz", "https://other/a.tgz", "oci://r/a",
                                     "a b.tgz", "a%41.tgz", "a%zz.tgz", "a/./b/../c.tgz", "a.tgz#frag", "", ".",
                                     "..", "1a:b", ":x", "a(1)!.tgz", "a?.tgz", "a%2Fb.tgz", "ü.tgz", "a;b=c/d.tgz"};
  buf_t qs = BUF_INIT, ours = BUF_INIT;
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
    for (size_t r = 0; r < sizeof refs / sizeof refs[0]; r++) {
      buf_printf(&qs, "%s\t%s\n", bases[b], refs[r]);
      buf_t out = BUF_INIT;
      char err[512];
      if (index_url_resolve(bases[b], refs[r], &out, err, sizeof err)) buf_printf(&ours, "ERR\t%s\n", err);
      else buf_printf(&ours, "OK\t%s\n", out.data ? out.data : "");
      buf_free(&out);
    }
  char *go = NULL;
  size_t gon;
  CHECK_EQ_INT(oracle_run(oracle, "url", qs.data, qs.len, &go, &gon), 0);
  if (go) CHECK_EQ_INT(lines_cmp("url", qs.data, ours.data, go), 0);
  free(go);
  buf_free(&qs), buf_free(&ours);
}

static void test_tags(const char *oracle) {
  buf_t qs = BUF_INIT, ours = BUF_INIT;
  for (int i = 0; i < 1500; i++) {
    buf_t con = BUF_INIT, tags = BUF_INIT;
    gen_constraint(&con);
    size_t n = rnd(30);
    const char **list = calloc(n + 1, sizeof *list);
    buf_t store[30];
    for (size_t k = 0; k < n; k++) {
      store[k] = (buf_t)BUF_INIT;
      if (rnd(10) == 0) buf_puts(&store[k], rnd(2) ? "latest" : "v1.0.0");
      else gen_version(&store[k], true);
      if (k) buf_putc(&tags, ' ');
      buf_append(&tags, store[k].data, store[k].len);
      list[k] = store[k].data;
    }
    if (i % 50 == 0 && n) { /* an exact tag */
      buf_reset(&con);
      buf_puts(&con, list[0]);
    }
    buf_printf(&qs, "%s\t%s\n", con.data ? con.data : "", tags.data ? tags.data : "");
    buf_t out = BUF_INIT;
    char err[512];
    if (oci_tags_select(list, n, con.data ? con.data : "", &out, err, sizeof err)) buf_printf(&ours, "ERR\t%s\n", err);
    else buf_printf(&ours, "OK\t%s\n", out.data);
    buf_free(&out);
    for (size_t k = 0; k < n; k++) buf_free(&store[k]);
    free(list);
    buf_free(&con), buf_free(&tags);
  }
  char *go = NULL;
  size_t gon;
  CHECK_EQ_INT(oracle_run(oracle, "tags", qs.data, qs.len, &go, &gon), 0);
  if (go) CHECK_EQ_INT(lines_cmp("tags", qs.data, ours.data, go), 0);
  free(go);
  buf_free(&qs), buf_free(&ours);
}

int main(void) {
  const char *oracle = source_oracle();
  CHECK(oracle != NULL);
  if (!oracle) return t_done();
  test_index(oracle);
  test_validation(oracle);
  test_urls(oracle);
  test_tags(oracle);
  return t_done();
}
