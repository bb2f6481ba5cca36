/* Differential tests of the release record against Helm's own code (the Go oracle): records Helm
 * wrote decode and re-encode to Go's exact bytes, and records rudder writes are read by Helm's
 * Secrets driver and re-marshalled by Go to the very same bytes. */
#include "helm/release/release.h"
#include "tests/oracle/release/run.h"
#include <inttypes.h>
#include <math.h>
#include "t.h"

static const char *oracle;

static char *enc(const release_t *r) {
  buf_t b = BUF_INIT;
  CHECK_EQ_INT(release_encode_json(r, &b), 0);
  return buf_steal(&b);
}

/* Prints where two byte strings first differ. */
static void show_diff(const char *what, const char *a, const char *b) {
  size_t i = 0;
  while (a[i] && a[i] == b[i]) i++;
  size_t from = i > 60 ? i - 60 : 0;
  fprintf(stderr, "%s differs at byte %zu:\n  ours: %.140s\n  go:   %.140s\n", what, i, a + from, b + from);
}

#define CHECK_SAME(what, ours, go) do { \
    const char *_o = (ours), *_g = (go); \
    int _same = _o && _g && strcmp(_o, _g) == 0; \
    CHECK(_same); \
    if (!_same && _o && _g) show_diff(what, _o, _g); \
  } while (0)

/* A Helm-made Secret (sample-v4 / sample-v3 modes) decodes, and re-encodes to what Helm's driver Get
 * plus Go's json.Marshal give. */
static void helm_written(const char *mode, const char *name, const char *labels_want) {
  char *secret, *gojson;
  size_t n;
  if (oracle_run(oracle, mode, "", 0, &secret, &n) != 0) {
    CHECK(0);
    free(secret);
    return;
  }
  char args[200];
  snprintf(args, sizeof args, "secret-get store %s", name);
  CHECK_EQ_INT(oracle_run(oracle, args, secret, n, &gojson, NULL), 0);
  cJSON *sec = cJSON_Parse(secret);
  release_t *r = NULL;
  char err[256];
  int rc = release_secret_decode(sec, 0, &r, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s: %s\n", mode, err);
  if (r && gojson) {
    char *ours = enc(r);
    CHECK_SAME(mode, ours, gojson);
    char *labels = cJSON_PrintUnformatted(r->labels);
    CHECK_EQ_STR(labels, labels_want);
    free(labels);
    free(ours);
  }
  release_free(r);
  cJSON_Delete(sec);
  free(secret);
  free(gojson);
}

/* ---------- generated releases ---------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

static char *rstr(int maxlen) {
  static const char *const pieces[] = {"a", "Z", "0", " ", "-", ".", "/", "<", ">", "&", "\"", "\\", "\n", "\t", "\r",
                                       "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\xe2\x80\xa8", "\xe2\x80\xa9", "{{", "}}", "\xef\xbf\xbd", "'", "%s"};
  int len = rndn(maxlen + 1);
  buf_t b = BUF_INIT;
  buf_reserve(&b, 0);
  for (int i = 0; i < len; i++) buf_puts(&b, pieces[rndn(sizeof pieces / sizeof *pieces)]);
  return buf_steal(&b);
}

static char *rname(void) {
  char s[24];
  int n = 1 + rndn(12);
  for (int i = 0; i < n; i++) s[i] = "abcdefghijklmnopqrstuvwxyz0123456789-"[rndn(i ? 37 : 26)];
  s[n] = 0;
  return strdup(s);
}

static double rdouble(void) {
  switch (rndn(8)) {
  case 0: return (double)(rndn(2000001) - 1000000);
  case 1: return (double)rndn(1000) / 8.0;
  case 2: { static const double e[] = {1e21, 1e20, 9.999999999999999e20, 1e-6, 9.99999e-7, 1e-7, 5e-324, 1.7976931348623157e308,
                                       0.1, 0.2, 0.30000000000000004, 100, 1e100, 2.5e-8, 123456789012345678.0, -0.0};
            return e[rndn(sizeof e / sizeof *e)]; }
  case 3: return ldexp((double)(rnd() >> 11), rndn(200) - 100) * (rndn(2) ? 1 : -1);
  default: {
    uint64_t bits;
    double d;
    do {
      bits = rnd();
      memcpy(&d, &bits, sizeof d);
    } while (isnan(d) || isinf(d));
    return d;
  }
  }
}

static cJSON *rjson(int depth) {
  int k = rndn(depth > 0 ? 7 : 5);
  switch (k) {
  case 0: return cJSON_CreateNull();
  case 1: return cJSON_CreateBool(rndn(2));
  case 2: return cJSON_CreateNumber(rdouble());
  case 3:
  case 4: { char *s = rstr(8); cJSON *j = cJSON_CreateString(s); free(s); return j; }
  case 5: {
    cJSON *a = cJSON_CreateArray();
    for (int i = rndn(4); i > 0; i--) cJSON_AddItemToArray(a, rjson(depth - 1));
    return a;
  }
  default: {
    cJSON *o = cJSON_CreateObject();
    for (int i = rndn(5); i > 0; i--) {
      char *key = rstr(4);
      cJSON_AddItemToObject(o, key, rjson(depth - 1));
      free(key);
    }
    return o;
  }
  }
}

static cJSON *robject(int depth) {
  cJSON *o = cJSON_CreateObject();
  for (int i = rndn(6); i > 0; i--) {
    char *key = rstr(5);
    cJSON_AddItemToObject(o, key, rjson(depth));
    free(key);
  }
  return o;
}

static release_time_t rtime(int zero_ok) {
  if (zero_ok && rndn(3) == 0) return (release_time_t){0};
  int64_t sec = (int64_t)(rnd() % 4000000000ull) - 100000000;
  int32_t nsec = rndn(3) == 0 ? 0 : rndn(2) ? (int32_t)(rnd() % 1000000000) : (int32_t)(rnd() % 1000) * 1000000;
  int32_t off = rndn(3) == 0 ? 0 : (rndn(113) - 56) * 900;
  return release_time_make(sec, nsec, off);
}

static char **rstrv(size_t *n) {
  *n = (size_t)rndn(4);
  char **v = *n ? calloc(*n, sizeof *v) : NULL;
  for (size_t i = 0; i < *n; i++) v[i] = rstr(6);
  return v;
}

static release_file_t *rfiles(size_t *n, bool *has) {
  *n = (size_t)rndn(4);
  *has = *n > 0 || rndn(2);
  release_file_t *f = *n ? calloc(*n, sizeof *f) : NULL;
  for (size_t i = 0; i < *n; i++) {
    f[i].name = rstr(5);
    f[i].len = (size_t)rndn(40);
    f[i].data = f[i].len ? malloc(f[i].len) : NULL;
    for (size_t k = 0; k < f[i].len; k++) f[i].data[k] = (unsigned char)rnd();
    f[i].data_nonnil = f[i].len > 0 || rndn(2);
    f[i].modtime = rtime(1);
  }
  return f;
}

static release_dependency_t *rdeps(size_t *n) {
  *n = (size_t)rndn(3);
  release_dependency_t *d = *n ? calloc(*n, sizeof *d) : NULL;
  for (size_t i = 0; i < *n; i++) {
    d[i].name = rstr(4);
    d[i].version = rstr(3);
    d[i].repository = rstr(4);
    d[i].condition = rstr(3);
    d[i].tags = rstrv(&d[i].ntags);
    d[i].enabled = rndn(2);
    if (rndn(2)) {
      d[i].import_values = cJSON_CreateArray();
      for (int k = rndn(3); k > 0; k--) cJSON_AddItemToArray(d[i].import_values, rjson(2));
    }
    d[i].alias = rstr(3);
  }
  return d;
}

static release_t *rrelease(void) {
  release_t *r = calloc(1, sizeof *r);
  r->name = rname();
  r->namespace = rndn(5) ? rname() : NULL;
  r->version = 1 + rndn(100000);
  r->apply_method = strdup(rndn(2) ? "ssa" : rndn(2) ? "csa" : "");
  r->manifest = rstr(30);
  if (rndn(6)) {
    r->info = calloc(1, sizeof *r->info);
    r->info->first_deployed = rtime(1);
    r->info->last_deployed = rtime(1);
    r->info->deleted = rtime(1);
    r->info->description = rstr(10);
    r->info->status = strdup(rndn(2) ? "deployed" : "superseded");
    r->info->rollback_revision = rndn(3) ? 0 : rndn(50);
    r->info->notes = rstr(20);
  }
  if (rndn(6)) {
    release_chart_t *c = r->chart = calloc(1, sizeof *c);
    if (rndn(5)) {
      release_metadata_t *m = c->metadata = calloc(1, sizeof *m);
      m->name = rstr(5);
      m->home = rstr(5);
      m->sources = rstrv(&m->nsources);
      m->version = rstr(4);
      m->description = rstr(10);
      m->keywords = rstrv(&m->nkeywords);
      m->nmaintainers = (size_t)rndn(3);
      m->maintainers = m->nmaintainers ? calloc(m->nmaintainers, sizeof *m->maintainers) : NULL;
      for (size_t i = 0; i < m->nmaintainers; i++) {
        m->maintainers[i].name = rstr(4);
        m->maintainers[i].email = rstr(4);
        m->maintainers[i].url = rstr(4);
      }
      m->icon = rstr(4);
      m->api_version = strdup(rndn(2) ? "v2" : "v1");
      m->condition = rstr(3);
      m->tags = rstr(3);
      m->app_version = rstr(3);
      m->deprecated = rndn(2);
      if (rndn(2)) {
        m->annotations = cJSON_CreateObject();
        for (int i = rndn(4); i > 0; i--) {
          char *k = rstr(4), *v = rstr(6);
          cJSON_AddStringToObject(m->annotations, k, v);
          free(k);
          free(v);
        }
      }
      m->kube_version = rstr(3);
      m->dependencies = rdeps(&m->ndependencies);
      m->type = rndn(2) ? strdup("application") : NULL;
    }
    if (rndn(3) == 0) {
      c->lock = calloc(1, sizeof *c->lock);
      c->lock->generated = rtime(1);
      c->lock->digest = rstr(6);
      c->lock->dependencies = rdeps(&c->lock->ndependencies);
      c->lock->has_dependencies = c->lock->ndependencies > 0 || rndn(2);
    }
    c->templates = rfiles(&c->ntemplates, &c->has_templates);
    c->values = rndn(4) ? robject(3) : NULL;
    if (rndn(2)) {
      c->schema_len = (size_t)rndn(30);
      c->schema = c->schema_len ? malloc(c->schema_len) : NULL;
      for (size_t k = 0; k < c->schema_len; k++) c->schema[k] = (unsigned char)rnd();
      c->has_schema = true;
    }
    c->schema_modtime = rtime(1);
    c->files = rfiles(&c->nfiles, &c->has_files);
    c->modtime = rtime(1);
  }
  r->config = rndn(3) ? robject(3) : NULL;
  r->nhooks = (size_t)rndn(3);
  r->hooks = r->nhooks ? calloc(r->nhooks, sizeof *r->hooks) : NULL;
  for (size_t i = 0; i < r->nhooks; i++) {
    release_hook_t *h = &r->hooks[i];
    h->name = rstr(4);
    h->kind = rstr(4);
    h->path = rstr(6);
    h->manifest = rstr(20);
    h->events = rstrv(&h->nevents);
    h->started_at = rtime(1);
    h->completed_at = rtime(1);
    h->phase = rndn(2) ? strdup("Succeeded") : NULL;
    h->weight = rndn(3) ? 0 : rndn(2001) - 1000;
    h->delete_policies = rstrv(&h->ndelete_policies);
    h->output_log_policies = rstrv(&h->noutput_log_policies);
  }
  if (rndn(2)) {
    r->labels = cJSON_CreateObject();
    cJSON_AddStringToObject(r->labels, "team", "blue");
  }
  return r;
}

/* Ours → Go decode → Go encode gives our bytes; Helm's driver reads our Secret; Helm's Secret reads back. */
static void generated(int count) {
  for (int i = 0; i < count; i++) {
    release_t *r = rrelease();
    char *ours = enc(r);
    char *go = NULL;
    char what[64];
    snprintf(what, sizeof what, "generated release %d (reencode)", i);
    CHECK_EQ_INT(oracle_run(oracle, "reencode", ours, strlen(ours), &go, NULL), 0);
    CHECK_SAME(what, ours, go);
    free(go);
    if (r->info && r->name && *r->name) {
      /* our Secret, read by Helm's Secrets driver */
      release_secret_opts_t o = {.storage_namespace = "store", .created_at = 1700000000 + i};
      cJSON *sec;
      CHECK_EQ_INT(release_secret_json(r, &o, &sec), 0);
      char *sj = cJSON_PrintUnformatted(sec);
      buf_t name = BUF_INIT;
      release_secret_name(r, &name);
      char args[200];
      snprintf(args, sizeof args, "secret-get store %s", name.data);
      snprintf(what, sizeof what, "generated release %d (secret-get)", i);
      CHECK_EQ_INT(oracle_run(oracle, args, sj, strlen(sj), &go, NULL), 0);
      CHECK_SAME(what, ours, go);
      free(go);
      free(sj);
      cJSON_Delete(sec);
      buf_free(&name);
      /* Helm's Secret, read by us */
      char *hsec = NULL;
      CHECK_EQ_INT(oracle_run(oracle, "secret-create store", ours, strlen(ours), &hsec, NULL), 0);
      cJSON *hs = cJSON_Parse(hsec ? hsec : "");
      release_t *back = NULL;
      char err[256];
      int rc = release_secret_decode(hs, 0, &back, err, sizeof err);
      CHECK_EQ_INT(rc, 0);
      if (rc) fprintf(stderr, "%s\n", err);
      if (back) {
        char *again = enc(back);
        snprintf(what, sizeof what, "generated release %d (secret-create)", i);
        CHECK_SAME(what, again, ours);
        free(again);
      }
      const cJSON *lab = cJSON_GetObjectItem(cJSON_GetObjectItem(hs, "metadata"), "labels");
      CHECK(cJSON_GetObjectItem(lab, "createdAt") != NULL);
      CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(lab, "owner")), "helm");
      release_free(back);
      cJSON_Delete(hs);
      free(hsec);
    }
    free(ours);
    release_free(r);
  }
}

/* Go's shortest float formatting, on many doubles at once (powers of two are the hard cases). */
static void floats_bulk(void) {
  release_t r = {0};
  r.config = cJSON_CreateObject();
  cJSON *a = cJSON_AddArrayToObject(r.config, "f");
  for (int i = 0; i < 20000; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(rdouble()));
  for (int e = -1074; e <= 1023; e++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ldexp(1.0, e)));
  for (int e = -320; e <= 308; e++) cJSON_AddItemToArray(a, cJSON_CreateNumber(strtod("1e0", NULL) * pow(10, e)));
  char *ours = enc(&r), *go = NULL;
  CHECK_EQ_INT(oracle_run(oracle, "reencode", ours, strlen(ours), &go, NULL), 0);
  CHECK_SAME("floats", ours, go);
  free(ours);
  free(go);
  release_clear(&r);
}

int main(void) {
  oracle = oracle_path();
  if (!oracle) {
    CHECK(!"RUDDER_RELEASE_ORACLE names the Helm release oracle");
    return t_done();
  }
  helm_written("sample-v4", "sh.helm.release.v1.demo-rel.v7", "{\"team\":\"blue\"}");
  helm_written("sample-v3", "sh.helm.release.v1.legacy.v3", "{}");
  floats_bulk();
  const char *n = getenv("RUDDER_ORACLE_CASES");
  generated(n ? atoi(n) : 40);
  return t_done();
}
