/* The repository index stream parser, version selection and chart URL resolution
 * (helm/source/index.h): fields, counts, Helm's validation and order, every chunk boundary,
 * hostile input (alias bombs, huge strings, deep nesting, truncation, limits). */
#include "helm/source/index.h"

#include <stdlib.h>

#include "t.h"

static const char *const INDEX =
    "apiVersion: v1\n"
    "entries:\n"
    "  other:\n"
    "  - name: other\n"
    "    version: 9.9.9\n"
    "    keywords: [a, b]\n"
    "    maintainers:\n"
    "    - name: someone\n"
    "  nginx:\n"
    "  - apiVersion: v2\n"
    "    appVersion: \"1.25\"\n"
    "    created: \"2026-01-02T03:04:05.123456789Z\"\n"
    "    description: A web\tserver\n"
    "    digest: 0123abcd\n"
    "    name: nginx\n"
    "    type: application\n"
    "    urls:\n"
    "    - charts/nginx-1.2.0.tgz\n"
    "    - https://mirror.example/nginx-1.2.0.tgz\n"
    "    version: 1.2.0\n"
    "    kubeVersion: '>= 1.25.0-0'\n"
    "    dependencies:\n"
    "    - name: common\n"
    "      version: 2.x\n"
    "      repository: oci://registry.example/charts\n"
    "      alias: base\n"
    "      condition: common.enabled\n"
    "      tags: [x]\n"
    "      import-values: [y]\n"
    "    annotations: {a: b}\n"
    "  - name: nginx\n"
    "    version: 1.10.0\n"
    "    deprecated: true\n"
    "    urls: [nginx-1.10.0.tgz]\n"
    "  - name: nginx\n"
    "    version: 2.0.0-beta.1\n"
    "  - name: nginx\n"
    "    version: not-semver\n"
    "  - name: nginx/evil\n"
    "    version: 3.0.0\n"
    "  - name: nginx\n"
    "    version: 4.0.0\n"
    "    type: weird\n"
    "  - name: nginx\n"
    "    version: v1.9.0\n"
    "  -\n"
    "  redis: []\n"
    "  gone:\n"
    "generated: \"2026-01-02T03:04:05Z\"\n"
    "serverInfo: {contextPath: /x}\n";

static const char *const NAMES[] = {"nginx", "redis", "gone", "absent"};

/* Parses text fed in pieces of `chunk` bytes (0: all at once) or split once at `split`. */
static index_parser_t *parse(const char *text, size_t len, size_t chunk, size_t split, const index_limits_t *lim,
                             int *rc, char *err, size_t errlen) {
  index_parser_t *p = NULL;
  CHECK_EQ_INT(index_parser_new(NAMES, 4, lim, &p), 0);
  *rc = 0;
  err[0] = 0;
  if (split) {
    *rc = index_parser_feed(p, text, split, err, errlen);
    if (!*rc) *rc = index_parser_feed(p, text + split, len - split, err, errlen);
  } else if (chunk) {
    for (size_t i = 0; i < len && !*rc; i += chunk)
      *rc = index_parser_feed(p, text + i, len - i < chunk ? len - i : chunk, err, errlen);
  } else {
    *rc = index_parser_feed(p, text, len, err, errlen);
  }
  if (!*rc) *rc = index_parser_finish(p, err, errlen);
  return p;
}

/* A one-line digest of what was kept, to compare runs. */
static void summary(const index_parser_t *p, buf_t *b) {
  index_counts_t c = index_parser_counts(p);
  buf_printf(b, "charts=%zu versions=%zu kept=%zu skipped=%zu;", c.charts, c.versions, c.kept, c.skipped);
  for (size_t k = 0; k < 4; k++) {
    const index_chart_t *ch = index_parser_chart(p, NAMES[k]);
    buf_printf(b, "%s:%d:", ch->name, ch->present);
    for (size_t i = 0; i < ch->nversions; i++) {
      const index_version_t *v = &ch->versions[i];
      buf_printf(b, "[%s %s %s %s %s %s %s %s %d", v->name, v->version, v->app_version, v->digest, v->created,
                 v->kube_version, v->api_version, v->type, v->deprecated);
      for (size_t u = 0; u < v->nurls; u++) buf_printf(b, " u=%s", v->urls[u]);
      for (size_t d = 0; d < v->ndeps; d++)
        buf_printf(b, " d=%s,%s,%s,%s,%s", v->deps[d].name, v->deps[d].version, v->deps[d].repository,
                   v->deps[d].alias, v->deps[d].condition);
      buf_puts(b, "]");
    }
  }
}

static void test_fields(void) {
  char err[512];
  int rc;
  index_parser_t *p = parse(INDEX, strlen(INDEX), 0, 0, NULL, &rc, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s\n", err);
  CHECK_EQ_STR(index_parser_api_version(p), "v1");
  index_counts_t c = index_parser_counts(p);
  CHECK_EQ_INT(c.charts, 4);
  CHECK_EQ_INT(c.versions, 9);
  CHECK_EQ_INT(c.kept, 4);
  CHECK_EQ_INT(c.skipped, 4); /* not-semver, nginx/evil, type weird, the null entry */
  const index_chart_t *n = index_parser_chart(p, "nginx");
  CHECK(n && n->present);
  CHECK_EQ_INT(n->nversions, 4);
  /* newest first in semver order (not text order); the prerelease of 2.0.0 is above 1.x */
  CHECK_EQ_STR(n->versions[0].version, "2.0.0-beta.1");
  CHECK_EQ_STR(n->versions[1].version, "1.10.0");
  CHECK_EQ_STR(n->versions[2].version, "v1.9.0");
  CHECK_EQ_STR(n->versions[3].version, "1.2.0");
  CHECK(n->versions[1].deprecated);
  CHECK_EQ_INT(n->versions[1].nurls, 1);
  CHECK_EQ_STR(n->versions[3].description, "A web server"); /* sanitized as Helm does */
  CHECK(index_parser_chart(p, "other") == NULL);
  CHECK(index_parser_chart(p, "redis")->present);
  CHECK_EQ_INT(index_parser_chart(p, "redis")->nversions, 0);
  CHECK(index_parser_chart(p, "gone")->present);
  CHECK(!index_parser_chart(p, "absent")->present);
  index_parser_free(p);
}

static void test_fields_full(void) {
  /* the 1.2.0 entry, alone, with every field */
  char err[512];
  int rc;
  index_parser_t *p = parse(INDEX, strlen(INDEX), 0, 0, NULL, &rc, err, sizeof err);
  const index_chart_t *n = index_parser_chart(p, "nginx");
  (void)n;
  index_parser_free(p);
  const char *one = "apiVersion: v1\nentries:\n  nginx:\n  - apiVersion: v2\n    appVersion: \"1.25\"\n"
                    "    created: \"2026-01-02T03:04:05.123456789Z\"\n    digest: 0123abcd\n    name: nginx\n"
                    "    type: application\n    urls:\n    - charts/nginx-1.2.0.tgz\n    - https://m/n.tgz\n"
                    "    version: 1.2.0\n    kubeVersion: '>= 1.25.0-0'\n    dependencies:\n    - name: common\n"
                    "      version: 2.x\n      repository: oci://r/charts\n      alias: base\n"
                    "      condition: common.enabled\n";
  p = parse(one, strlen(one), 0, 0, NULL, &rc, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  n = index_parser_chart(p, "nginx");
  CHECK_EQ_INT(n->nversions, 1);
  const index_version_t *v = &n->versions[0];
  CHECK_EQ_STR(v->name, "nginx");
  CHECK_EQ_STR(v->version, "1.2.0");
  CHECK_EQ_STR(v->app_version, "1.25");
  CHECK_EQ_STR(v->created, "2026-01-02T03:04:05.123456789Z");
  CHECK_EQ_STR(v->digest, "0123abcd");
  CHECK_EQ_STR(v->api_version, "v2");
  CHECK_EQ_STR(v->type, "application");
  CHECK_EQ_STR(v->kube_version, ">= 1.25.0-0");
  CHECK_EQ_INT(v->nurls, 2);
  CHECK_EQ_STR(v->urls[1], "https://m/n.tgz");
  CHECK_EQ_INT(v->ndeps, 1);
  CHECK_EQ_STR(v->deps[0].repository, "oci://r/charts");
  CHECK_EQ_STR(v->deps[0].alias, "base");
  CHECK_EQ_STR(v->deps[0].condition, "common.enabled");
  CHECK(!v->deprecated);
  index_parser_free(p);
  /* apiVersion defaults to v1 for a chart version, as Helm's loader sets it */
  const char *two = "apiVersion: v1\nentries:\n  nginx:\n  - name: nginx\n    version: 1.0.0\n";
  p = parse(two, strlen(two), 0, 0, NULL, &rc, err, sizeof err);
  CHECK_EQ_STR(index_parser_chart(p, "nginx")->versions[0].api_version, "v1");
  CHECK_EQ_STR(index_parser_chart(p, "nginx")->versions[0].app_version, "");
  index_parser_free(p);
}

/* Every split point, single bytes, and a small window (so that parsing runs mid-stream) give
 * the same result as one feed. */
static void test_chunks(void) {
  char err[512];
  int rc;
  size_t len = strlen(INDEX);
  index_parser_t *p = parse(INDEX, len, 0, 0, NULL, &rc, err, sizeof err);
  buf_t want = BUF_INIT;
  summary(p, &want);
  index_parser_free(p);
  index_limits_t small = {.max_string = 40, .window = 100};
  int bad = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t s = 1; s < len; s++) {
      p = parse(INDEX, len, 0, s, pass ? &small : NULL, &rc, err, sizeof err);
      buf_t got = BUF_INIT;
      if (rc == 0) summary(p, &got);
      if (rc || strcmp(got.data, want.data)) {
        if (!bad++) fprintf(stderr, "split at %zu (pass %d): rc %d %s\n  got  %s\n  want %s\n", s, pass, rc, err,
                            got.data ? got.data : "", want.data);
      }
      buf_free(&got);
      index_parser_free(p);
    }
  CHECK_EQ_INT(bad, 0);
  for (size_t chunk = 1; chunk <= 7; chunk++) {
    p = parse(INDEX, len, chunk, 0, &small, &rc, err, sizeof err);
    buf_t got = BUF_INIT;
    CHECK_EQ_INT(rc, 0);
    summary(p, &got);
    CHECK_EQ_STR(got.data, want.data);
    CHECK(index_parser_peak_buffered(p) <= 2 * 100 + chunk);
    buf_free(&got);
    index_parser_free(p);
  }
  buf_free(&want);
}

/* Truncated at every byte: either an error or a parse; never a crash or a leak. */
static void test_truncated(void) {
  char err[512];
  int rc, errors = 0;
  size_t len = strlen(INDEX);
  for (size_t cut = 0; cut < len; cut++) {
    index_parser_t *p = parse(INDEX, cut, 0, 0, NULL, &rc, err, sizeof err);
    if (rc) {
      errors++;
      CHECK(strstr(err, "index.yaml") != NULL);
    }
    index_parser_free(p);
  }
  CHECK(errors > 0);
}

static int parse_err(const char *text, const index_limits_t *lim, char *err, size_t errlen) {
  int rc;
  index_parser_t *p = parse(text, strlen(text), 0, 0, lim, &rc, err, errlen);
  index_parser_free(p);
  return rc;
}

#define CHECK_ERR(text, lim, code, needle) do { \
    char _e[512]; \
    int _rc = parse_err(text, lim, _e, sizeof _e); \
    CHECK_EQ_INT(_rc, code); \
    if (!strstr(_e, needle)) { t_failed++; fprintf(stderr, "%s:%d: error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, _e, needle); } \
    else t_passed++; \
  } while (0)

static void test_hostile(void) {
  /* billion laughs: refused at the first alias, nothing expanded */
  const char *bomb = "apiVersion: v1\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nentries: {}\n";
  CHECK_ERR(bomb, NULL, INDEX_EINVAL, "line 2: unknown field");
  const char *bomb2 = "apiVersion: v1\nentries:\n  nginx:\n  - &v {name: nginx, version: 1.0.0}\n  - *v\n";
  CHECK_ERR(bomb2, NULL, INDEX_EINVAL, "line 5: aliases are not allowed");
  const char *bomb3 = "apiVersion: v1\nserverInfo: &a [x, x]\nannotations: {b: [*a, *a]}\nentries: {}\n";
  CHECK_ERR(bomb3, NULL, INDEX_EINVAL, "line 3: aliases are not allowed");
  /* deep nesting, in a skipped field and in a kept one */
  buf_t deep = BUF_INIT;
  buf_puts(&deep, "apiVersion: v1\nserverInfo: ");
  for (int i = 0; i < 100000; i++) buf_putc(&deep, '[');
  CHECK_ERR(deep.data, NULL, INDEX_E2BIG, "nesting deeper than 64 levels");
  buf_reset(&deep);
  buf_puts(&deep, "apiVersion: v1\nentries:\n  nginx:\n  - name: nginx\n    annotations: ");
  for (int i = 0; i < 1000; i++) buf_puts(&deep, "{a: ");
  CHECK_ERR(deep.data, NULL, INDEX_E2BIG, "line 5: nesting deeper");
  /* a huge string: refused by the string limit or, past the window, by the window */
  buf_reset(&deep);
  buf_puts(&deep, "apiVersion: v1\nentries:\n  nginx:\n  - name: nginx\n    description: \"");
  for (int i = 0; i < 100000; i++) buf_putc(&deep, 'x');
  buf_puts(&deep, "\"\n");
  CHECK_ERR(deep.data, NULL, INDEX_E2BIG, "line 5: a string of 100000 bytes (the limit is 65536)");
  index_limits_t lim = {.max_string = 1000, .window = 4096};
  CHECK_ERR(deep.data, &lim, INDEX_E2BIG, "more than 4096 bytes without a complete YAML token");
  {
    /* the same error at the same line however the input is chunked */
    char e1[512], e2[512];
    int r1, r2;
    index_parser_t *p1 = parse(deep.data, deep.len, 0, 0, &lim, &r1, e1, sizeof e1);
    index_parser_t *p2 = parse(deep.data, deep.len, 3, 0, &lim, &r2, e2, sizeof e2);
    CHECK_EQ_INT(r1, r2);
    CHECK_EQ_STR(e1, e2);
    index_parser_free(p1);
    index_parser_free(p2);
  }
  buf_reset(&deep);
  for (int i = 0; i < 2000; i++) buf_puts(&deep, "# a comment\n");
  buf_puts(&deep, "apiVersion: v1\n");
  CHECK_ERR(deep.data, &lim, INDEX_E2BIG, "without a complete YAML token");
  CHECK_EQ_INT(parse_err(deep.data, NULL, (char[64]){0}, 64), 0); /* within the default window */
  buf_free(&deep);
  /* limits */
  index_limits_t tiny = {.max_bytes = 20};
  CHECK_ERR(INDEX, &tiny, INDEX_E2BIG, "more than 20 bytes");
  index_limits_t fewv = {.max_versions = 3};
  CHECK_ERR(INDEX, &fewv, INDEX_E2BIG, "more than 3 chart versions");
  index_limits_t fewk = {.max_kept = 2};
  CHECK_ERR(INDEX, &fewk, INDEX_E2BIG, "more than 2 versions of the asked-for charts");
  index_limits_t fewl = {.max_list = 1};
  CHECK_ERR(INDEX, &fewl, INDEX_E2BIG, "line 19: more than 1 items in a list");
  /* structure and strictness */
  CHECK_ERR("", NULL, INDEX_EINVAL, "empty index.yaml file");
  CHECK_ERR("entries: {}\n", NULL, INDEX_EINVAL, "no API version specified");
  CHECK_ERR("- a\n", NULL, INDEX_EINVAL, "line 1: the index must be a mapping");
  CHECK_ERR("apiVersion: v1\nentries: [a]\n", NULL, INDEX_EINVAL, "line 2: entries must be a mapping");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx: 3\n", NULL, INDEX_EINVAL, "line 3: a chart's entry must be a list");
  CHECK_ERR("apiVersion: v1\nentries:\n  x:\n  - 3\n", NULL, INDEX_EINVAL, "line 4: a chart version must be a mapping");
  CHECK_ERR("apiVersion: v1\nentries:\n  x:\n  - name: x\n    bogus: 1\n", NULL, INDEX_EINVAL,
            "line 5: unknown field \"bogus\" in a chart version");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx:\n  - name: x\n    dependencies: [{name: a, bogus: 1}]\n", NULL,
            INDEX_EINVAL, "unknown field \"bogus\" in a dependency");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx:\n  - name: x\n    name: y\n", NULL, INDEX_EINVAL,
            "line 5: key \"name\" already set in map");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx: []\n  nginx: []\n", NULL, INDEX_EINVAL,
            "line 4: key \"nginx\" already set in map");
  CHECK_ERR("apiVersion: v1\napiVersion: v2\n", NULL, INDEX_EINVAL, "line 2: key \"apiVersion\" already set");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx:\n  - name: x\n    urls: a\n", NULL, INDEX_EINVAL,
            "line 5: urls must be a list");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx:\n  - name: [x]\n", NULL, INDEX_EINVAL, "line 4: name must be a string");
  CHECK_ERR("apiVersion: v1\nentries:\n  nginx:\n  - {name: x\n", NULL, INDEX_EINVAL, "index.yaml line");
  CHECK_ERR("apiVersion: v1\n? [a]\n: b\n", NULL, INDEX_EINVAL, "line 2: a mapping key must be a string");
  CHECK_ERR("apiVersion: v1\n\tentries: {}\n", NULL, INDEX_EINVAL, "line 2:");
  /* JSON is recognised by its first non-blank byte, even when the first chunk is only blanks */
  {
    const char *js = "\n  {\"apiVersion\": \"v1\", \"x\": 1}";
    int r;
    char e[256];
    index_parser_t *pj = parse(js, strlen(js), 1, 0, NULL, &r, e, sizeof e);
    CHECK_EQ_INT(r, 0);
    index_parser_free(pj);
  }
  /* JSON: unknown fields are allowed (Helm decodes JSON without the strict check) */
  char err[512];
  CHECK_EQ_INT(parse_err("{\"apiVersion\": \"v1\", \"x\": 1, \"entries\": {\"nginx\": [{\"name\": \"nginx\", "
                         "\"version\": \"1.0.0\", \"foo\": [1]}]}}",
                         NULL, err, sizeof err),
               0);
  /* only the first document counts */
  CHECK_EQ_INT(parse_err("apiVersion: v1\n---\n- not: [an index\n", NULL, err, sizeof err), 0);
  /* invalid dependency alias and a null dependency or maintainer make a version skipped */
  const char *skip = "apiVersion: v1\nentries:\n  nginx:\n  - {name: nginx, version: 1.0.0, dependencies: [{name: a, alias: 'b c'}]}\n"
                     "  - {name: nginx, version: 1.1.0, dependencies: [null]}\n"
                     "  - {name: nginx, version: 1.2.0, maintainers: [~]}\n"
                     "  - {name: nginx, version: 1.3.0, dependencies: [{name: a}, {name: a}]}\n"
                     "  - {name: '', version: 1.4.0}\n  - {name: '..', version: 1.5.0}\n  - {name: nginx}\n";
  int rc;
  index_parser_t *p = parse(skip, strlen(skip), 0, 0, NULL, &rc, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  const index_chart_t *c = index_parser_chart(p, "nginx");
  CHECK_EQ_INT(c->nversions, 1); /* duplicate dependency names are a skippable error in Helm */
  CHECK_EQ_STR(c->versions[0].version, "1.3.0");
  CHECK_EQ_INT(c->skipped, 6);
  index_parser_free(p);
  /* after an error every call returns it again */
  CHECK_EQ_INT(index_parser_new(NAMES, 4, NULL, &p), 0);
  CHECK_EQ_INT(index_parser_feed(p, "- x\n", 4, err, sizeof err), 0);
  CHECK_EQ_INT(index_parser_finish(p, err, sizeof err), INDEX_EINVAL);
  CHECK_EQ_INT(index_parser_feed(p, "a", 1, err, sizeof err), INDEX_EINVAL);
  CHECK(strstr(err, "must be a mapping") != NULL);
  index_parser_free(p);
}

static const char *const SEL =
    "apiVersion: v1\nentries:\n  app:\n"
    "  - {name: app, version: 1.0.0}\n  - {name: app, version: 1.0.1}\n  - {name: app, version: 1.1.0}\n"
    "  - {name: app, version: 1.2.0-rc.1}\n  - {name: app, version: 2.0.0}\n  - {name: app, version: v2.1.0}\n"
    "  - {name: app, version: 3.0.0-alpha}\n  - {name: app, version: 0.9.0}\n  - {name: app, version: 0.0.3}\n"
    "  - {name: app, version: '2.0'}\n  empty: []\n";

static void test_select(void) {
  static const char *const NM[] = {"app", "empty", "nope"};
  index_parser_t *p;
  char err[512];
  CHECK_EQ_INT(index_parser_new(NM, 3, NULL, &p), 0);
  CHECK_EQ_INT(index_parser_feed(p, SEL, strlen(SEL), err, sizeof err), 0);
  CHECK_EQ_INT(index_parser_finish(p, err, sizeof err), 0);
  const index_chart_t *app = index_parser_chart(p, "app");
  static const struct {
    const char *c, *want;
  } cases[] = {
      {"", "v2.1.0"},          {"*", "v2.1.0"},       {"^1", "1.1.0"},         {"~1.0", "1.0.1"},
      {"1.x", "1.1.0"},        {"<1.0.0", "0.9.0"},   {">=1.2.0-0", "3.0.0-alpha"}, {"1.2.0-rc.1", "1.2.0-rc.1"},
      {"2.0", "2.0"},          /* the exact string wins over the equal 2.0.0 */
      {"2.0.0", "2.0.0"},      {"^0.0.3", "0.0.3"},   {">1 <2 || 0.9.x", "0.9.0"} /* ">1" means ">= 2" */, {"1.0.0 - 1.0.5", "1.0.1"},
      {"!=2.1.0", "2.0.0"},    {"=1.0.0", "1.0.0"},   {"v1.0.0", "1.0.0"},     {"~0", "0.9.0"},
      {">=3.0.0-0 <4", "3.0.0-alpha"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const index_version_t *v;
    int rc = index_chart_select(app, cases[i].c, &v, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
      if (strcmp(v->version, cases[i].want)) fprintf(stderr, "constraint \"%s\":\n", cases[i].c);
      CHECK_EQ_STR(v->version, cases[i].want);
    }
  }
  const index_version_t *v;
  CHECK_EQ_INT(index_chart_select(app, "^5", &v, err, sizeof err), INDEX_ENOENT);
  CHECK_EQ_STR(err, "no chart version found for app-^5");
  CHECK_EQ_INT(index_chart_select(app, "zz", &v, err, sizeof err), INDEX_EINVAL);
  CHECK_EQ_STR(err, "improper constraint: \"zz\"");
  CHECK_EQ_INT(index_chart_select(index_parser_chart(p, "empty"), "", &v, err, sizeof err), INDEX_ENOENT);
  CHECK_EQ_STR(err, "no chart version found");
  CHECK_EQ_INT(index_chart_select(index_parser_chart(p, "nope"), "", &v, err, sizeof err), INDEX_ENOENT);
  CHECK_EQ_STR(err, "no chart name found");
  CHECK_EQ_INT(index_chart_select(NULL, "", &v, err, sizeof err), INDEX_ENOENT);
  index_parser_free(p);
}

static void test_urls(void) {
  static const struct {
    const char *base, *ref, *want;
  } cases[] = {
      {"https://h/charts", "a-1.0.0.tgz", "https://h/charts/a-1.0.0.tgz"},
      {"https://h/charts/", "a-1.0.0.tgz", "https://h/charts/a-1.0.0.tgz"},
      {"https://h", "a.tgz", "https://h/a.tgz"},
      {"https://h/chartrepo/library", "charts/a.tgz", "https://h/chartrepo/library/charts/a.tgz"},
      {"https://h/x/", "../a.tgz", "https://h/a.tgz"},
      {"https://h/x/", "/abs/a.tgz", "https://h/abs/a.tgz"},
      {"https://h/x/?token=1", "a.tgz?b=2", "https://h/x/a.tgz?token=1"},
      {"https://h/x", "//mirror/a.tgz", "https://mirror/a.tgz"},
      {"https://h/x", "https://other/a.tgz", "https://other/a.tgz"},
      {"https://h/x", "oci://r/a", "oci://r/a"},
      {"HTTPS://U:P@h:8443/x", "a b.tgz", "https://U:P@h:8443/x/a%20b.tgz"},
      {"https://h/x", "a%41.tgz", "https://h/x/a%41.tgz"},
      {"https://h/x", "./a/./b/../c.tgz", "https://h/x/a/c.tgz"},
      {"https://h/x", "a.tgz#frag", "https://h/x/a.tgz#frag"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    buf_t out = BUF_INIT;
    char err[256];
    int rc = index_url_resolve(cases[i].base, cases[i].ref, &out, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(out.data, cases[i].want);
    buf_free(&out);
  }
  buf_t out = BUF_INIT;
  char err[256];
  CHECK_EQ_INT(index_url_resolve("https://h/x", "a%zz.tgz", &out, err, sizeof err), INDEX_EINVAL);
  CHECK_EQ_STR(err, "failed to parse a%zz.tgz as URL: parse \"a%zz.tgz\": invalid URL escape \"%zz\"");
  CHECK_EQ_INT(index_url_resolve("https://h/x", ":a", &out, err, sizeof err), INDEX_EINVAL);
  CHECK(strstr(err, "missing protocol scheme") != NULL);
  CHECK_EQ_INT(index_url_resolve("https://h/x", "1a:b", &out, err, sizeof err), INDEX_EINVAL);
  CHECK(strstr(err, "first path segment in URL cannot contain colon") != NULL);
  CHECK_EQ_INT(index_url_resolve("https://h/x", "a\nb", &out, err, sizeof err), INDEX_EINVAL);
  CHECK(strstr(err, "invalid control character") != NULL);
  buf_free(&out);
}

/* ---- the walk: every chart handed over once, as its entry ends ---- */

typedef struct walk_log_s {
  buf_t b;
  size_t calls, max_versions, stop_at;
} walk_log_t;

/* One line per chart: its name, skipped count and every version's fields. */
static void walk_line(const index_chart_t *c, buf_t *b) {
  buf_printf(b, "%s:%zu:", c->name, c->skipped);
  for (size_t i = 0; i < c->nversions; i++) {
    const index_version_t *v = &c->versions[i];
    buf_printf(b, "[%s %s %s %s %s %s|%s|%s", v->name, v->version, v->app_version, v->digest, v->created,
               v->description, v->home, v->icon);
    for (size_t k = 0; k < v->nkeywords; k++) buf_printf(b, " k=%s", v->keywords[k]);
    for (size_t k = 0; k < v->nsources; k++) buf_printf(b, " s=%s", v->sources[k]);
    for (size_t k = 0; k < v->nmaintainers; k++)
      buf_printf(b, " m=%s,%s,%s", v->maintainers[k].name, v->maintainers[k].email, v->maintainers[k].url);
    for (size_t u = 0; u < v->nurls; u++) buf_printf(b, " u=%s", v->urls[u]);
    buf_puts(b, "]");
  }
  buf_puts(b, "\n");
}

static int walk_cb(const index_chart_t *c, void *data) {
  walk_log_t *w = data;
  w->calls++;
  if (c->nversions > w->max_versions) w->max_versions = c->nversions;
  walk_line(c, &w->b);
  return w->stop_at && w->calls == w->stop_at ? -125 : 0;
}

static int walk(const char *text, size_t len, size_t chunk, const index_limits_t *lim, walk_log_t *w, char *err,
                size_t errlen) {
  index_parser_t *p = NULL;
  int rc = index_parser_new_walk(lim, walk_cb, w, &p);
  CHECK_EQ_INT(rc, 0);
  if (rc) return rc;
  err[0] = 0;
  if (!chunk) chunk = len;
  for (size_t i = 0; i < len && !rc; i += chunk)
    rc = index_parser_feed(p, text + i, len - i < chunk ? len - i : chunk, err, errlen);
  if (!rc) rc = index_parser_finish(p, err, errlen);
  CHECK(index_parser_chart(p, "nginx") == NULL); /* a walk keeps nothing */
  index_parser_free(p);
  return rc;
}

static const char *const META =
    "apiVersion: v1\n"
    "entries:\n"
    "  web:\n"
    "  - name: web\n"
    "    version: 1.0.0\n"
    "    home: https://web.example\n"
    "    icon: https://web.example/icon.png\n"
    "    keywords: [http, \"server\"]\n"
    "    sources:\n"
    "    - https://git.example/web\n"
    "    maintainers:\n"
    "    - name: Ann\n"
    "      email: ann@example.org\n"
    "    - name: Bob\n"
    "      url: https://bob.example\n"
    "    urls: [web-1.0.0.tgz]\n";

static void test_walk(void) {
  char err[512];
  walk_log_t w = {.b = BUF_INIT};
  CHECK_EQ_INT(walk(INDEX, strlen(INDEX), 0, NULL, &w, err, sizeof err), 0);
  /* every chart, in the index's order, including the empty and the null entries */
  CHECK_EQ_INT(w.calls, 4);
  CHECK(w.b.data && !strncmp(w.b.data, "other:0:[other 9.9.9", 20));
  CHECK(strstr(w.b.data, " k=a k=b m=someone,,]") != NULL);
  CHECK(strstr(w.b.data, "\nredis:0:\ngone:0:\n") != NULL);
  /* each chart as the name-keeping parser keeps it (same versions, same order, same fields) */
  int rc;
  index_parser_t *p = parse(INDEX, strlen(INDEX), 0, 0, NULL, &rc, err, sizeof err);
  buf_t want = BUF_INIT;
  walk_line(index_parser_chart(p, "nginx"), &want);
  index_parser_free(p);
  CHECK(want.data && strstr(w.b.data, want.data) != NULL);
  CHECK(strstr(w.b.data, "nginx:4:[nginx 2.0.0-beta.1") != NULL);
  buf_free(&want);
  /* every chunk size gives the same walk */
  for (size_t chunk = 1; chunk < 64; chunk += 7) {
    walk_log_t c = {.b = BUF_INIT};
    CHECK_EQ_INT(walk(INDEX, strlen(INDEX), chunk, NULL, &c, err, sizeof err), 0);
    CHECK(c.b.len == w.b.len && !memcmp(c.b.data, w.b.data, w.b.len));
    buf_free(&c.b);
  }
  buf_free(&w.b);

  /* the fields a Chart object shows */
  walk_log_t m = {.b = BUF_INIT};
  CHECK_EQ_INT(walk(META, strlen(META), 0, NULL, &m, err, sizeof err), 0);
  CHECK_EQ_STR(m.b.data, "web:0:[web 1.0.0    |https://web.example|https://web.example/icon.png k=http k=server "
                         "s=https://git.example/web m=Ann,ann@example.org, m=Bob,,https://bob.example u=web-1.0.0.tgz]\n");
  buf_free(&m.b);

  /* a keyword that is not a string fails the whole index, as Go's decoder does */
  const char *badkw = "apiVersion: v1\nentries:\n  web:\n  - name: web\n    version: 1.0.0\n    keywords: [{a: b}]\n";
  walk_log_t k = {.b = BUF_INIT};
  CHECK_EQ_INT(walk(badkw, strlen(badkw), 0, NULL, &k, err, sizeof err), INDEX_EINVAL);
  CHECK(strstr(err, "line 6: a keyword must be a string") != NULL);
  CHECK_EQ_INT(k.calls, 0);
  buf_free(&k.b);

  /* the callback stops the walk with its code */
  walk_log_t s = {.b = BUF_INIT, .stop_at = 2};
  CHECK_EQ_INT(walk(INDEX, strlen(INDEX), 0, NULL, &s, err, sizeof err), -125);
  CHECK_EQ_INT(s.calls, 2);
  CHECK(strstr(err, "stopped at chart nginx") != NULL);
  buf_free(&s.b);
}

/* Memory is one chart at a time: 200 charts of 50 versions walk with max_kept 60 (the kept
 * parser asking for them all needs 10,000), and a chart of more than max_kept fails naming it. */
static void test_walk_bounded(void) {
  buf_t idx = BUF_INIT;
  buf_puts(&idx, "apiVersion: v1\nentries:\n");
  for (int c = 0; c < 200; c++) {
    buf_printf(&idx, "  chart-%03d:\n", c);
    for (int v = 0; v < 50; v++)
      buf_printf(&idx, "  - name: chart-%03d\n    version: 1.%d.0\n    urls: [chart-%03d-1.%d.0.tgz]\n", c, v, c, v);
  }
  index_limits_t lim = {.max_kept = 60};
  char err[512];
  walk_log_t w = {.b = BUF_INIT};
  CHECK_EQ_INT(walk(idx.data, idx.len, 4096, &lim, &w, err, sizeof err), 0);
  CHECK_EQ_INT(w.calls, 200);
  CHECK_EQ_INT(w.max_versions, 50);
  CHECK(strstr(w.b.data, "chart-199:0:[chart-199 1.49.0") != NULL);
  buf_free(&w.b);
  lim.max_kept = 40;
  walk_log_t f = {.b = BUF_INIT};
  CHECK_EQ_INT(walk(idx.data, idx.len, 4096, &lim, &f, err, sizeof err), INDEX_E2BIG);
  CHECK(strstr(err, "chart chart-000 has more than 40 versions") != NULL);
  CHECK_EQ_INT(f.calls, 0);
  buf_free(&f.b);
  CHECK_EQ_INT(index_parser_new_walk(NULL, NULL, NULL, &(index_parser_t *){NULL}), INDEX_EINVAL);
  buf_free(&idx);
}

int main(void) {
  test_fields();
  test_fields_full();
  test_chunks();
  test_truncated();
  test_hostile();
  test_select();
  test_urls();
  test_walk();
  test_walk_bounded();
  return t_done();
}
