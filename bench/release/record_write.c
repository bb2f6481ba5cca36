/* A release record's writes, timed: the upgrade's supersede of the previous revision (the listed
 * Secret decoded, its status set to superseded, the Secret written again) with the compressed tail
 * taken from the listed member (gz_tail_from_member) and with the record compressed whole (as
 * before session 16, and as for a record Helm's driver wrote); and the decode alone, which both
 * include. The record is one of the bench chart's size: its templates and values as the chart
 * (CHART_DIR, default bench/scale/chart), its manifest the templates' text, as a rendered manifest
 * would be about.
 * Usage: record_write [CHART_DIR] [ITERATIONS]   (default 2000). Prints `name value unit` lines. */
#include "base/b64.h"
#include "base/buf.h"
#include "base/gz.h"
#include "helm/action/record.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static void die(const char *what) {
  fprintf(stderr, "record_write: %s\n", what);
  exit(1);
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) die(path);
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, k);
  fclose(f);
  *n = b.len;
  return buf_steal(&b);
}

/* The release JSON of revision 1, deployed, of the chart in dir. */
static char *release_json(const char *dir) {
  cJSON *r = cJSON_CreateObject(), *info = cJSON_AddObjectToObject(r, "info");
  cJSON_AddStringToObject(r, "name", "app-00001");
  cJSON_AddStringToObject(info, "first_deployed", "2026-12-06T20:00:00Z");
  cJSON_AddStringToObject(info, "last_deployed", "2026-12-06T20:00:00Z");
  cJSON_AddStringToObject(info, "deleted", "");
  cJSON_AddStringToObject(info, "description", "Install complete");
  cJSON_AddStringToObject(info, "status", "deployed");
  cJSON *chart = cJSON_AddObjectToObject(r, "chart"), *md = cJSON_AddObjectToObject(chart, "metadata");
  cJSON_AddStringToObject(md, "name", "scale-app");
  cJSON_AddStringToObject(md, "version", "1.0.0");
  cJSON_AddStringToObject(md, "apiVersion", "v2");
  cJSON *tpls = cJSON_AddArrayToObject(chart, "templates");
  buf_t manifest = BUF_INIT, path = BUF_INIT;
  buf_printf(&path, "%s/templates", dir);
  DIR *d = opendir(path.data);
  if (!d) die(path.data);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    buf_reset(&path);
    buf_printf(&path, "%s/templates/%s", dir, de->d_name);
    size_t n;
    char *text = slurp(path.data, &n), *b64;
    if (b64_encode_alloc(text, n, &b64, NULL)) die("out of memory");
    cJSON *t = cJSON_CreateObject();
    buf_reset(&path);
    buf_printf(&path, "templates/%s", de->d_name);
    cJSON_AddStringToObject(t, "name", path.data);
    cJSON_AddStringToObject(t, "data", b64);
    cJSON_AddItemToArray(tpls, t);
    if (strcmp(de->d_name, "_helpers.tpl")) buf_printf(&manifest, "---\n# Source: scale-app/templates/%s\n%s", de->d_name, text);
    free(text);
    free(b64);
  }
  closedir(d);
  buf_reset(&path);
  buf_printf(&path, "%s/values.yaml", dir);
  size_t vn;
  char *values = slurp(path.data, &vn);
  /* the values as a map of their lines: about the size the parsed values take */
  cJSON *v = cJSON_AddObjectToObject(chart, "values");
  int line = 0;
  for (char *s = strtok(values, "\n"); s; s = strtok(NULL, "\n")) {
    char k[16];
    snprintf(k, sizeof k, "k%03d", line++);
    cJSON_AddStringToObject(v, k, s);
  }
  free(values);
  cJSON *cfg = cJSON_AddObjectToObject(r, "config"), *img = cJSON_AddObjectToObject(cfg, "image");
  cJSON_AddStringToObject(img, "tag", "2.4.1");
  cJSON_AddStringToObject(r, "manifest", manifest.data ? manifest.data : "");
  cJSON_AddNumberToObject(r, "version", 1);
  cJSON_AddStringToObject(r, "namespace", "scale-1");
  char *out = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  buf_free(&manifest);
  buf_free(&path);
  return out;
}

/* The Secret as the API lists it after rudder wrote rel (a split member). */
static cJSON *listed_secret(release_t *rel) {
  release_secret_opts_t o = {.storage_namespace = "scale-1"};
  cJSON *sec = NULL;
  /* A Secret body's data.release is base64 of the stored bytes (the driver's base64 text of the
   * member), as a list returns it. */
  if (release_secret_json(rel, &o, &sec)) die("release_secret_json");
  return sec;
}

static double us_since(uint64_t t0, int n) { return (double)(uv_hrtime() - t0) / 1e3 / n; }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "bench/scale/chart";
  int iters = argc > 2 ? atoi(argv[2]) : 2000;
  if (iters < 1) die("ITERATIONS wants a positive number");
  char *json = release_json(dir), e[160];
  release_t *rel = NULL;
  if (release_decode_json(json, strlen(json), &rel, e, sizeof e)) die(e);
  cJSON *sec = listed_secret(rel);
  printf("record_write_json_bytes %zu B\n", strlen(json));
  double best[3] = {1e30, 1e30, 1e30};
  int reused_ok = 1;
  for (int round = 0; round < 5; round++)
    for (int mode = 0; mode < 3; mode++) { /* 0: decode only, 1: supersede taking the tail, 2: whole */
      uint64_t t0 = uv_hrtime();
      for (int i = 0; i < iters; i++) {
        record_t r;
        buf_t err = BUF_INIT;
        if (record_from_secret(sec, &r, &err)) die(err.data ? err.data : "record_from_secret");
        buf_free(&err);
        if (mode) {
          if (mode == 2) {
            free(r.member);
            r.member = NULL;
          }
          if (record_set_status(&r, "superseded", NULL)) die("record_set_status");
          if (mode == 1 && !r.gz) reused_ok = 0;
          char *body = record_secret_json(&r, "scale-1", 0, NULL);
          if (!body) die("record_secret_json");
          free(body);
        }
        record_free(&r);
      }
      double us = us_since(t0, iters);
      if (us < best[mode]) best[mode] = us;
    }
  if (!reused_ok) die("the listed member's tail was not taken");
  printf("record_write_decode_us %.1f us\n", best[0]);
  printf("record_write_supersede_tail_taken_us %.1f us\n", best[1]);
  printf("record_write_supersede_whole_us %.1f us\n", best[2]);
  printf("record_write_supersede_write_only_tail_taken_us %.1f us\n", best[1] - best[0]);
  printf("record_write_supersede_write_only_whole_us %.1f us\n", best[2] - best[0]);
  printf("record_write_supersede_whole_over_tail_taken %.2f ratio\n", best[2] / best[1]);
  cJSON_Delete(sec);
  release_free(rel);
  free(json);
  return 0;
}
