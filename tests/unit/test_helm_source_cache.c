/* The shared chart cache (helm/source/cache.h): one chart per digest however many users, digest
 * verification before parsing, refcounts, LRU eviction of unreferenced entries within the byte
 * budget, the dispose callback, concurrent use from several threads. */
#include "helm/source/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/gz.h"
#include "base/sha256.h"
#include "t.h"

/* Appends one ustar header + data for name. */
static size_t add(unsigned char *buf, size_t off, const char *name, const char *data, size_t len) {
  unsigned char *h = buf + off;
  memset(h, 0, 512);
  strncpy((char *)h, name, 100);
  memcpy(h + 100, "0000644", 7);
  snprintf((char *)h + 124, 12, "%011zo", len);
  h[156] = '0';
  memcpy(h + 257, "ustar\0" "00", 8);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++) sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
  off += 512;
  if (len) memcpy(buf + off, data, len);
  return off + ((len + 511) & ~(size_t)511);
}

/* A packaged chart named name at version, with a template of pad bytes. */
static unsigned char *make_tgz(const char *name, const char *version, size_t pad, size_t *len) {
  size_t cap = 4096 + pad + 1024;
  unsigned char *tar = calloc(1, cap);
  char path[128], cy[256];
  snprintf(cy, sizeof cy, "apiVersion: v2\nname: %s\nversion: %s\n", name, version);
  snprintf(path, sizeof path, "%s/Chart.yaml", name);
  size_t off = add(tar, 0, path, cy, strlen(cy));
  char *body = malloc(pad + 1);
  memset(body, 'x', pad);
  snprintf(path, sizeof path, "%s/templates/cm.yaml", name);
  off = add(tar, off, path, body, pad);
  free(body);
  off += 1024; /* two zero blocks */
  unsigned char *gz;
  CHECK_EQ_INT(gz_compress(tar, off, -1, &gz, len), 0);
  free(tar);
  return gz;
}

static void hexd(const void *p, size_t n, char out[65]) {
  uint8_t d[32];
  base_sha256(p, n, d);
  for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int disposed;
static void on_dispose(const chart_cache_entry_t *e, void *data) {
  (void)e;
  (*(int *)data)++;
}

static void test_shared(void) {
  chart_cache_t *c;
  chart_cache_options_t o = {.dispose = on_dispose, .dispose_data = &disposed};
  CHECK_EQ_INT(chart_cache_new(&o, &c), 0);
  size_t n;
  unsigned char *tgz = make_tgz("web", "1.0.0", 100, &n);
  char dg[65], want[80];
  hexd(tgz, n, dg);
  snprintf(want, sizeof want, "sha256:%s", dg);
  char err[512];
  /* 1,000 releases of one chart hold one chart */
  chart_cache_entry_t *refs[1000];
  for (int i = 0; i < 1000; i++) {
    CHECK_EQ_INT(chart_cache_load(c, tgz, n, i % 2 ? want : dg, "https://r/web-1.0.0.tgz", &refs[i], err, sizeof err), 0);
    CHECK(refs[i] == refs[0]);
  }
  chart_cache_stats_t s = chart_cache_stats(c);
  CHECK_EQ_INT(s.entries, 1);
  CHECK_EQ_INT(s.loads, 1);
  CHECK_EQ_INT(s.hits, 999);
  CHECK_EQ_INT(s.referenced, 1);
  CHECK_EQ_STR(refs[0]->chart->meta.name, "web");
  CHECK_EQ_STR(refs[0]->digest_hex, dg);
  uint8_t d[32];
  CHECK_EQ_INT(chart_cache_digest_parse(want, d), 0);
  chart_cache_entry_t *e = chart_cache_lookup(c, d);
  CHECK(e == refs[0]);
  chart_cache_addref(c, e);
  chart_cache_release(c, e);
  chart_cache_release(c, e);
  for (int i = 0; i < 1000; i++) chart_cache_release(c, refs[i]);
  s = chart_cache_stats(c);
  CHECK_EQ_INT(s.referenced, 0);
  CHECK_EQ_INT(s.entries, 1); /* unreferenced but kept: within budget */
  CHECK_EQ_INT(disposed, 0);
  /* digest mismatch: refused before parsing, with both digests */
  char bad[65];
  memcpy(bad, dg, 65);
  bad[0] = bad[0] == '0' ? '1' : '0';
  CHECK_EQ_INT(chart_cache_load(c, tgz, n, bad, "https://r/web-1.0.0.tgz", &e, err, sizeof err), CHART_CACHE_EDIGEST);
  CHECK(e == NULL);
  CHECK(strstr(err, "https://r/web-1.0.0.tgz: digest mismatch: expected sha256:") != NULL);
  CHECK(strstr(err, dg) != NULL);
  CHECK_EQ_INT(chart_cache_stats(c).digest_mismatches, 1);
  CHECK_EQ_INT(chart_cache_load(c, tgz, n, "md5:abc", "x", &e, err, sizeof err), CHART_CACHE_EINVAL);
  CHECK(strstr(err, "is not a sha256 digest") != NULL);
  CHECK_EQ_INT(chart_cache_digest_parse("sha256:zz", d), CHART_CACHE_EINVAL);
  CHECK_EQ_INT(chart_cache_digest_parse(NULL, d), CHART_CACHE_EINVAL);
  /* uppercase hex is the same digest */
  for (char *p = dg; *p; p++)
    if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 'a' + 'A');
  CHECK_EQ_INT(chart_cache_load(c, tgz, n, dg, "x", &e, err, sizeof err), 0);
  chart_cache_release(c, e);
  /* a corrupt archive (no expected digest): the loader's message */
  tgz[n / 2] ^= 0xff;
  CHECK(chart_cache_load(c, tgz, n, NULL, "https://r/broken.tgz", &e, err, sizeof err) != 0);
  CHECK(strncmp(err, "https://r/broken.tgz: ", 22) == 0);
  CHECK(e == NULL);
  free(tgz);
  chart_cache_free(c);
  CHECK_EQ_INT(disposed, 1);
}

static void test_lru(void) {
  chart_cache_t *c;
  disposed = 0;
  /* room for about three charts of ~10 KiB */
  chart_cache_options_t o = {.max_bytes = 35000, .dispose = on_dispose, .dispose_data = &disposed};
  CHECK_EQ_INT(chart_cache_new(&o, &c), 0);
  unsigned char *tgz[6];
  size_t n[6];
  chart_cache_entry_t *e[6];
  char err[512], ver[16];
  for (int i = 0; i < 6; i++) {
    snprintf(ver, sizeof ver, "1.0.%d", i);
    tgz[i] = make_tgz("app", ver, 10000, &n[i]);
  }
  for (int i = 0; i < 6; i++) CHECK_EQ_INT(chart_cache_load(c, tgz[i], n[i], NULL, "x", &e[i], err, sizeof err), 0);
  /* all six referenced: none may go, the budget is exceeded */
  chart_cache_stats_t s = chart_cache_stats(c);
  CHECK_EQ_INT(s.entries, 6);
  CHECK(s.bytes > s.max_bytes);
  CHECK_EQ_INT(s.evictions, 0);
  /* released in order 0..5: each release evicts the oldest unreferenced while over budget */
  for (int i = 0; i < 6; i++) chart_cache_release(c, e[i]);
  s = chart_cache_stats(c);
  CHECK(s.bytes <= s.max_bytes);
  CHECK_EQ_INT(s.entries, 3);
  CHECK_EQ_INT(s.evictions, 3);
  CHECK_EQ_INT(disposed, 3);
  uint8_t d[32];
  base_sha256(tgz[0], n[0], d);
  CHECK(chart_cache_lookup(c, d) == NULL); /* the oldest went */
  base_sha256(tgz[3], n[3], d);
  chart_cache_entry_t *keep = chart_cache_lookup(c, d);
  CHECK(keep != NULL);
  /* a used entry moves out of the LRU; loading more evicts the others first */
  chart_cache_entry_t *again;
  CHECK_EQ_INT(chart_cache_load(c, tgz[0], n[0], NULL, "x", &again, err, sizeof err), 0);
  chart_cache_release(c, again);
  CHECK_EQ_INT(chart_cache_load(c, tgz[1], n[1], NULL, "x", &again, err, sizeof err), 0);
  chart_cache_release(c, again);
  CHECK(chart_cache_lookup(c, d) == keep);
  chart_cache_release(c, keep);
  chart_cache_release(c, keep);
  s = chart_cache_stats(c);
  CHECK(s.bytes <= s.max_bytes);
  for (int i = 0; i < 6; i++) free(tgz[i]);
  chart_cache_free(c);
}

typedef struct {
  chart_cache_t *c;
  unsigned char **tgz;
  size_t *n;
  int fails;
} worker_t;

static void *worker(void *arg) {
  worker_t *w = arg;
  char err[256];
  for (int i = 0; i < 300; i++) {
    chart_cache_entry_t *e;
    int k = (i * 7) % 4;
    if (chart_cache_load(w->c, w->tgz[k], w->n[k], NULL, "x", &e, err, sizeof err)) w->fails++;
    else chart_cache_release(w->c, e);
  }
  return NULL;
}

static void test_threads(void) {
  chart_cache_t *c;
  chart_cache_options_t o = {.max_bytes = 25000};
  CHECK_EQ_INT(chart_cache_new(&o, &c), 0);
  unsigned char *tgz[4];
  size_t n[4];
  char ver[16];
  for (int i = 0; i < 4; i++) {
    snprintf(ver, sizeof ver, "2.0.%d", i);
    tgz[i] = make_tgz("t", ver, 10000, &n[i]);
  }
  pthread_t th[4];
  worker_t w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker_t){c, tgz, n, 0};
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(w[i].fails, 0);
  }
  chart_cache_stats_t s = chart_cache_stats(c);
  CHECK_EQ_INT(s.referenced, 0);
  CHECK(s.bytes <= s.max_bytes);
  for (int i = 0; i < 4; i++) free(tgz[i]);
  chart_cache_free(c);
}

int main(void) {
  test_shared();
  test_lru();
  test_threads();
  return t_done();
}
