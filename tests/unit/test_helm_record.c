/* helm/action/record: a listed deployed record keeps its stored gzip member, and its first status
 * change (deployed -> superseded, as an upgrade writes it) takes the compressed tail from it: the
 * Secret written then holds the very bytes a fresh compression gives, and reads back as the
 * release. A record whose member has no split tail (one stream, as Helm's Go driver writes) is
 * compressed whole, as before. */
#include "helm/action/record.h"
#include "base/b64.h"
#include "base/gz.h"
#include <stdlib.h>
#include <string.h>
#include "t.h"

/* A release record's JSON as Helm stores it (the input, not an expected output). */
static const char rel_json[] =
    "{\"name\":\"app\",\"info\":{\"first_deployed\":\"2026-01-02T03:04:05Z\",\"last_deployed\":\"2026-01-02T03:04:05Z\","
    "\"deleted\":\"\",\"description\":\"Install complete\",\"status\":\"deployed\"},\"chart\":{\"metadata\":{\"name\":"
    "\"scale-app\",\"version\":\"1.0.0\",\"apiVersion\":\"v2\",\"appVersion\":\"2.4.0\",\"type\":\"application\"},"
    "\"lock\":null,\"templates\":[{\"name\":\"templates/deployment.yaml\",\"data\":\"YXBpVmVyc2lvbjogYXBwcy92MQpr"
    "aW5kOiBEZXBsb3ltZW50Cm1ldGFkYXRhOgogIG5hbWU6IHt7IC5SZWxlYXNlLk5hbWUgfX0K\"}],\"values\":{\"image\":{\"tag\":"
    "\"2.4.0\"},\"replicas\":0},\"schema\":null,\"files\":null},\"config\":{\"image\":{\"tag\":\"2.4.1\"}},"
    "\"manifest\":\"---\\n# Source: scale-app/templates/deployment.yaml\\napiVersion: apps/v1\\nkind: Deployment\\n"
    "metadata:\\n  name: app\\n\",\"version\":1,\"namespace\":\"scale-1\"}";

/* data.release of a Secret body (record_secret_json's text), malloc'd. */
static char *data_release(const char *secret_json) {
  cJSON *s = cJSON_Parse(secret_json);
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "data"), "release");
  char *out = cJSON_IsString(d) ? strdup(d->valuestring) : NULL;
  cJSON_Delete(s);
  return out;
}

/* The Secret as the API lists it: data.release is base64 of the driver's base64 text of member. */
static cJSON *listed(const unsigned char *member, size_t n) {
  char *b1, *b2;
  size_t b1n;
  if (b64_encode_alloc(member, n, &b1, &b1n) || b64_encode_alloc(b1, b1n, &b2, NULL)) return NULL;
  cJSON *s = cJSON_CreateObject();
  cJSON *meta = cJSON_AddObjectToObject(s, "metadata");
  cJSON_AddStringToObject(meta, "name", "sh.helm.release.v1.app.v1");
  cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
  cJSON_AddStringToObject(labels, "name", "app");
  cJSON_AddStringToObject(labels, "owner", "helm");
  cJSON_AddStringToObject(labels, "status", "deployed");
  cJSON_AddStringToObject(labels, "version", "1");
  cJSON_AddStringToObject(s, "type", "helm.sh/release.v1");
  cJSON_AddStringToObject(cJSON_AddObjectToObject(s, "data"), "release", b2);
  free(b1);
  free(b2);
  return s;
}

/* The member data.release text holds. */
static unsigned char *member_of(const char *data, size_t *n) {
  unsigned char *inner, *raw;
  size_t inner_n;
  char e[64];
  if (b64_decode_alloc(data, strlen(data), &inner, &inner_n, e, sizeof e)) return NULL;
  int rc = b64_decode_alloc((const char *)inner, inner_n, &raw, n, e, sizeof e);
  free(inner);
  return rc ? NULL : raw;
}

/* Supersedes the record listed from member; *reused says whether its tail was taken. Returns the
 * written data.release. */
static char *supersede(const unsigned char *member, size_t n, int keep_member, int *reused) {
  cJSON *sec = listed(member, n);
  record_t r;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(record_from_secret(sec, &r, &err), 0);
  cJSON_Delete(sec);
  buf_free(&err);
  CHECK(r.member != NULL && r.member_len == n);
  if (!keep_member) {
    free(r.member);
    r.member = NULL;
  }
  CHECK_EQ_INT(record_set_status(&r, "superseded", NULL), 0);
  CHECK(r.member == NULL); /* given up once used */
  *reused = r.gz != NULL;
  char *body = record_secret_json(&r, "scale-1", 0, NULL);
  CHECK(body != NULL);
  char *d = data_release(body);
  free(body);
  record_free(&r);
  return d;
}

int main(void) {
  release_t *rel = NULL;
  char e[160];
  CHECK_EQ_INT(release_decode_json(rel_json, strlen(rel_json), &rel, e, sizeof e), 0);
  if (!rel) return t_done();

  /* Written by rudder: a split member. */
  gz_tail_t tail = {0};
  release_secret_opts_t o = {.storage_namespace = "scale-1", .tail_cache = &tail};
  cJSON *sec = NULL;
  CHECK_EQ_INT(release_secret_json(rel, &o, &sec), 0);
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sec, "data"), "release");
  size_t n = 0;
  unsigned char *member = member_of(d->valuestring, &n);
  CHECK(member != NULL);
  cJSON_Delete(sec);
  gz_tail_free(&tail);

  int reused = 0, fresh_reused = 1;
  char *with = supersede(member, n, 1, &reused), *without = supersede(member, n, 0, &fresh_reused);
  CHECK(reused);
  CHECK(!fresh_reused);
  /* The same bytes either way (the tail's stream is what compressing it again gives). */
  CHECK_EQ_STR(with, without);
  /* And they read back as the release, superseded. */
  size_t wn = 0;
  unsigned char *wm = member_of(with, &wn), *json = NULL;
  size_t jn = 0;
  char err[128];
  CHECK_EQ_INT(gz_decompress(wm, wn, 1 << 20, &json, &jn, err, sizeof err), 0);
  CHECK(json && strstr((char *)json, "\"status\":\"superseded\"") != NULL);
  CHECK(json && strstr((char *)json, "\"manifest\":\"---\\n# Source: scale-app/templates/deployment.yaml") != NULL);
  release_t *back = NULL;
  CHECK_EQ_INT(release_decode_json((const char *)json, jn, &back, e, sizeof e), 0);
  CHECK(back && back->info && back->info->status && !strcmp(back->info->status, "superseded"));
  release_free(back);
  free(json);
  free(wm);
  free(with);
  free(without);
  free(member);

  /* Written by Helm's driver (one gzip stream): no tail to take, compressed whole, still right. */
  unsigned char *one;
  size_t one_n;
  CHECK_EQ_INT(gz_compress(rel_json, strlen(rel_json), GZ_BEST_COMPRESSION, &one, &one_n), 0);
  char *helm_written = supersede(one, one_n, 1, &reused);
  CHECK(!reused);
  wm = member_of(helm_written, &wn);
  CHECK_EQ_INT(gz_decompress(wm, wn, 1 << 20, &json, &jn, err, sizeof err), 0);
  CHECK(json && strstr((char *)json, "\"status\":\"superseded\"") != NULL);
  free(json);
  free(wm);
  free(helm_written);
  free(one);
  release_free(rel);
  return t_done();
}
