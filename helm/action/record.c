#include "helm/action/record.h"
#include "base/gz.h"
#include "helm/chart/chart.h"
#include "helm/render/manifest.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *record__dup(const char *s) { return strdup(s ? s : ""); }

int record_from_secret(const cJSON *secret, record_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  char e[256] = "";
  release_t *rel = NULL;
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(secret, "metadata");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
  const char *sname = cJSON_IsString(name) ? name->valuestring : "release secret";
  /* Another storage format (a newer Helm's) is not read as if it were this one. */
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(secret, "type");
  if (cJSON_IsString(type) && strcmp(type->valuestring, "helm.sh/release.v1")) {
    buf_printf(err, "%s: storage format \"%s\" is not helm.sh/release.v1 (written by a newer Helm?)", sname,
               type->valuestring);
    return -22;
  }
  unsigned char *member = NULL;
  size_t member_len = 0;
  int rc = release_secret_decode_member(secret, 0, &rel, &member, &member_len, e, sizeof e);
  if (rc) {
    buf_printf(err, "%s: %s", sname, e);
    return rc;
  }
  /* What this version of the format cannot hold: a record a newer Helm wrote, or a damaged one. */
  size_t before = err->len;
  const release_metadata_t *cm = rel->chart ? rel->chart->metadata : NULL;
  const cJSON *lv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "labels"), "version");
  if (rel->apply_method && *rel->apply_method && strcmp(rel->apply_method, "ssa") && strcmp(rel->apply_method, "csa"))
    buf_printf(err, "%s: apply_method \"%s\" is neither ssa nor csa (written by a newer Helm?)", sname, rel->apply_method);
  else if (cm && cm->api_version && *cm->api_version && strcmp(cm->api_version, "v1") && strcmp(cm->api_version, "v2"))
    buf_printf(err, "%s: chart apiVersion \"%s\" is not v1 or v2 (written by a newer Helm?)", sname, cm->api_version);
  else if (rel->version < 1)
    buf_printf(err, "%s: the release has no revision number (version %lld)", sname, (long long)rel->version);
  else if (!rel->info || !rel->info->status || !*rel->info->status)
    buf_printf(err, "%s: the release has no status", sname);
  else if (cJSON_IsString(lv) && strtoll(lv->valuestring, NULL, 10) != rel->version)
    buf_printf(err, "%s: label version=%s but the record is revision %lld", sname, lv->valuestring,
               (long long)rel->version);
  if (err->len > before) {
    release_free(rel);
    free(member);
    return -22;
  }
  out->rel = rel;
  out->version = rel->version;
  out->status = record__dup(rel->info && rel->info->status ? rel->info->status : "unknown");
  out->secret_name = record__dup(cJSON_IsString(name) ? name->valuestring : "");
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
  const cJSON *owner = cJSON_GetObjectItemCaseSensitive(ann, RECORD_OWNER_ANNOTATION);
  if (cJSON_IsString(owner)) out->owner_uid = strdup(owner->valuestring);
  if (!out->status || !out->secret_name || (cJSON_IsString(owner) && !out->owner_uid)) {
    record_free(out);
    free(member);
    buf_puts(err, "out of memory");
    return -12;
  }
  /* The deployed record is the one an upgrade supersedes: its stored gzip member (decoded on the
   * way) is kept, so that that write can take the compressed tail from it (record_set_status). */
  if (!strcmp(out->status, "deployed")) {
    out->member = member;
    out->member_len = member_len;
  } else {
    free(member);
  }
  return 0;
}

static int record__finish(release_t *rel, long long version, record_t *out) {
  out->rel = rel;
  out->version = version;
  out->status = record__dup(rel->info->status);
  buf_t sn = BUF_INIT;
  if (release_secret_name(rel, &sn)) return -12;
  out->secret_name = buf_steal(&sn);
  /* Written twice (pending, then its outcome): the second write compresses only what changed. */
  out->gz = calloc(1, sizeof *out->gz);
  return out->status && out->secret_name && out->gz ? 0 : -12;
}

static int record__info(release_t *rel, const char *status, const char *description, const record_t *first,
                        release_time_t now) {
  if (!rel->info && !(rel->info = calloc(1, sizeof *rel->info))) return -12;
  /* An upgrade keeps the release's first deployment time, as Helm does. */
  const release_t *frel = first ? first->rel : NULL;
  rel->info->first_deployed = frel && frel->info && frel->info->first_deployed.set ? frel->info->first_deployed : now;
  rel->info->last_deployed = now;
  free(rel->info->status);
  free(rel->info->description);
  rel->info->status = record__dup(status);
  rel->info->description = record__dup(description);
  return rel->info->status && rel->info->description ? 0 : -12;
}

int record_new(const record_in_t *in, long long version, const char *status, const char *description,
               const record_t *first, record_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  release_t *rel = calloc(1, sizeof *rel);
  release_time_t now = release_time_now();
  if (!rel) goto oom;
  rel->name = record__dup(in->release_name);
  rel->namespace = record__dup(in->namespace);
  rel->version = version;
  rel->apply_method = record__dup("ssa");
  rel->config = in->config ? cJSON_Duplicate(in->config, 1) : cJSON_CreateObject();
  if (!rel->name || !rel->namespace || !rel->apply_method || !rel->config) goto oom;
  if (release_set_rendered(rel, in->set) || record__info(rel, status, description, first, now) ||
      release_set_chart(rel, in->chart, now))
    goto oom;
  if (record__finish(rel, version, out)) {
    rel = NULL; /* out owns it */
    goto oom;
  }
  return 0;
oom:
  if (rel && !out->rel) release_free(rel);
  record_free(out);
  buf_puts(err, "out of memory building the release record");
  return -12;
}

int record_copy(const record_t *from, long long version, const char *status, const char *description,
                const record_t *first, record_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  /* Through the record's own JSON: a deep copy of everything Helm keeps. */
  buf_t js = BUF_INIT;
  release_t *rel = NULL;
  char e[128];
  if (release_encode_json(from->rel, &js) || release_decode_json(js.data, js.len, &rel, e, sizeof e)) {
    buf_free(&js);
    buf_puts(err, "out of memory copying the release record");
    return -12;
  }
  buf_free(&js);
  rel->version = version;
  release_time_t now = release_time_now();
  if (record__info(rel, status, description, first, now) || record__finish(rel, version, out)) {
    if (!out->rel) release_free(rel);
    record_free(out);
    buf_puts(err, "out of memory copying the release record");
    return -12;
  }
  return 0;
}

int record_set_status(record_t *r, const char *status, const char *description) {
  release_t *rel = r->rel;
  /* A listed record rewritten (deployed -> superseded): the part after info is unchanged, so its
   * compressed stream is taken from the stored member when rudder wrote it (a split member; any
   * other has none) and only the head is compressed (gz_compress_split checks the text). */
  if (!r->gz && r->member) {
    gz_tail_t *t = calloc(1, sizeof *t);
    if (t && !gz_tail_from_member(r->member, r->member_len, (size_t)1 << 26, t)) r->gz = t;
    else free(t);
    free(r->member);
    r->member = NULL;
    r->member_len = 0;
  }
  char *st = strdup(status);
  if (!st) return -12;
  free(r->status);
  r->status = st;
  if (!rel->info && !(rel->info = calloc(1, sizeof *rel->info))) return -12;
  free(rel->info->status);
  rel->info->status = strdup(status);
  if (description) {
    free(rel->info->description);
    rel->info->description = strdup(description);
  }
  if (!strcmp(status, "deployed")) rel->info->last_deployed = release_time_now();
  return rel->info->status ? 0 : -12;
}

char *record_secret_json(const record_t *r, const char *ns, int creating, const char *owner_uid) {
  /* Helm's driver labels a created Secret createdAt and an updated one modifiedAt. */
  release_secret_opts_t o = {.storage_namespace = ns, .tail_cache = r->gz};
  if (creating) o.created_at = (int64_t)time(NULL);
  else o.modified_at = (int64_t)time(NULL);
  cJSON *sec = NULL;
  if (release_secret_json(r->rel, &o, &sec)) return NULL;
  if (owner_uid && *owner_uid) {
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(sec, "metadata");
    cJSON *ann = meta ? cJSON_AddObjectToObject(meta, "annotations") : NULL;
    if (!ann || !cJSON_AddStringToObject(ann, RECORD_OWNER_ANNOTATION, owner_uid)) {
      cJSON_Delete(sec);
      return NULL;
    }
  }
  char *s = cJSON_PrintUnformatted(sec);
  cJSON_Delete(sec);
  return s;
}

void record_free(record_t *r) {
  free(r->status);
  free(r->secret_name);
  free(r->owner_uid);
  release_free(r->rel);
  gz_tail_free(r->gz);
  free(r->gz);
  free(r->member);
  memset(r, 0, sizeof *r);
}

static int record__cmp(const void *a, const void *b) {
  const record_t *ra = a, *rb = b;
  return ra->version < rb->version ? -1 : ra->version > rb->version;
}

void record_sort(record_t *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, record__cmp);
}

size_t record_stored_size(const char *secret_json) {
  const char *k = strstr(secret_json, "\"release\":\"");
  if (!k) return 0;
  k += 11;
  const char *e = strchr(k, '"');
  size_t n = e ? (size_t)(e - k) : 0;
  return n / 4 * 3;
}

static int record__str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* Values equal as Go's JSON encoder writes them (sorted keys); a missing map and an empty one are
 * the same (Helm omits empty config). */
static int record__values_eq(const cJSON *a, const cJSON *b) {
  int ea = !a || cJSON_IsNull(a) || (cJSON_IsObject(a) && !a->child);
  int eb = !b || cJSON_IsNull(b) || (cJSON_IsObject(b) && !b->child);
  if (ea || eb) return ea && eb;
  buf_t x = BUF_INIT, y = BUF_INIT;
  int eq = !release_go_json_append(&x, a) && !release_go_json_append(&y, b) && x.len == y.len &&
           !memcmp(x.data, y.data, x.len);
  buf_free(&x);
  buf_free(&y);
  return eq;
}

int record_matches(const record_t *r, const chart_t *c, const cJSON *values, const char *ns) {
  const release_t *rel = r->rel;
  if (!rel || !rel->chart || !rel->chart->metadata || !c) return 0;
  const release_chart_t *ch = rel->chart;
  const release_metadata_t *m = ch->metadata;
  if (!record__str_eq(m->name, c->meta.name) || !record__str_eq(m->version, c->meta.version) ||
      !record__str_eq(m->app_version, c->meta.app_version) || !record__str_eq(rel->namespace, ns) ||
      !record__values_eq(rel->config, values) ||
      !record__values_eq(ch->values, c->has_values_file ? c->values : NULL) || ch->ntemplates != c->ntemplates)
    return 0;
  for (size_t i = 0; i < c->ntemplates; i++) {
    const release_file_t *f = &ch->templates[i];
    if (strcmp(f->name, c->templates[i].name) || f->len != c->templates[i].len ||
        memcmp(f->data, c->templates[i].data, f->len))
      return 0;
  }
  return 1;
}
