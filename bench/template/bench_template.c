/* Render benchmark of rudder's template engine: renders a chart-like
 * template set N times the way Helm's engine does per release (parse the
 * whole set, execute every non-partial file, drop "<no value>") and prints
 * the same figures as the Go oracle's -bench mode, for bench/template/run.sh.
 * As in the oracle, the values are decoded once, before the renders.
 * alloc_bytes_per_render is what a render takes from its arenas: the parse
 * trees (with the copies of the template texts) and the execution's values.
 * Usage: bench_template N CASES.jsonl   (the oracle's JSON lines for the set) */
#define _GNU_SOURCE /* memmem */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/release/release.h"
#include "helm/template/tpl_internal.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* strings.ReplaceAll(out, "<no value>", "") on out[from..]. */
static void drop_no_value(buf_t *b, size_t from) {
  size_t w = from, r = from;
  for (;;) {
    const char *hit = r < b->len ? memmem(b->data + r, b->len - r, "<no value>", 10) : NULL;
    size_t end = hit ? (size_t)(hit - b->data) : b->len;
    if (w != r) memmove(b->data + w, b->data + r, end - r);
    w += end - r;
    if (!hit) break;
    r = end + 10;
  }
  b->len = w;
}

/* One render: parse every template into a new set, execute the non-partials. */
static int render(const tpl_funcs_t *funcs, cJSON *tpls, tpl_value_t data, buf_t *out, double *exec_ns,
                  size_t *arena_bytes) {
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_set_t *set = tpl_set_new(funcs);
  buf_t err = BUF_INIT;
  int rc = a && set ? 0 : TPL_ENOMEM;
  cJSON *t;
  cJSON_ArrayForEach(t, tpls) {
    if (rc) break;
    const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(t, 0));
    const char *text = cJSON_GetStringValue(cJSON_GetArrayItem(t, 1));
    rc = tpl_set_parse(set, name, text, strlen(text), &err);
  }
  double t0 = now_ns();
  cJSON_ArrayForEach(t, tpls) {
    if (rc) break;
    const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(t, 0));
    const char *base = strrchr(name, '/');
    if ((base ? base[1] : name[0]) == '_') continue;
    tpl_helm_state_t hs;
    memset(&hs, 0, sizeof hs);
    tpl_exec_opts_t o = {.missingkey = TPL_MISSINGKEY_ZERO, .udata = &hs};
    size_t from = out->len;
    rc = tpl_set_execute(set, name, data, a, &o, out, &err);
    drop_no_value(out, from);
  }
  *exec_ns += now_ns() - t0;
  *arena_bytes += tpl_arena_used(a) + tpl__set_arena_used(set);
  if (rc) fprintf(stderr, "bench_template: %s\n", err.data ? err.data : "error");
  buf_free(&err);
  tpl_set_free(set);
  tpl_arena_free(a);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[1]) <= 0) {
    fprintf(stderr, "usage: bench_template N CASES.jsonl\n");
    return 2;
  }
  int n = atoi(argv[1]);
  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  tpl_funcs_t *funcs = tpl_funcs_new();
  if (!funcs || tpl_helm_funcs_add(funcs) || sprig_funcs_add(funcs)) return 2;
  char *line = NULL;
  size_t cap = 0;
  int status = 0;
  while (getline(&line, &cap, f) > 0) {
    cJSON *c = cJSON_Parse(line);
    if (!c) continue;
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
    cJSON *tpls = cJSON_GetObjectItem(c, "templates");
    /* Go's encoding, exact for every double (cJSON_Print rounds some to 15 digits). */
    buf_t vbuf = BUF_INIT, verr = BUF_INIT;
    release_go_json_append(&vbuf, cJSON_GetObjectItem(c, "values"));
    char *vjson = buf_steal(&vbuf);
    tpl_arena_t *va = tpl_arena_new(0);
    tpl_value_t data;
    if (!va || tpl_value_from_json(va, vjson, strlen(vjson), &data, &verr)) {
      fprintf(stderr, "bench_template: values: %s\n", verr.data ? verr.data : "out of memory");
      return 2;
    }
    buf_free(&verr);
    buf_t out = BUF_INIT;
    double exec_ns = 0;
    size_t arena = 0;
    if (render(funcs, tpls, data, &out, &exec_ns, &arena)) status = 1; /* warm-up */
    exec_ns = 0;
    arena = 0;
    double t0 = now_ns();
    for (int i = 0; i < n && !status; i++) {
      buf_reset(&out);
      if (render(funcs, tpls, data, &out, &exec_ns, &arena)) status = 1;
    }
    double total = now_ns() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    unsigned long long h = 14695981039346656037ULL;
    for (size_t i = 0; i < out.len; i++) h = (h ^ (unsigned char)out.data[i]) * 1099511628211ULL;
    printf("rudder %s renders=%d ns_per_render=%.0f exec_ns_per_render=%.0f alloc_bytes_per_render=%zu maxrss_kb=%ld "
           "out_bytes=%zu fnv=%016llx\n",
           name, n, total / n, exec_ns / n, arena / (size_t)n, ru.ru_maxrss, out.len, h);
    buf_free(&out);
    tpl_arena_free(va);
    free(vjson);
    cJSON_Delete(c);
  }
  free(line);
  fclose(f);
  tpl_funcs_free(funcs);
  return status;
}
