#include "reconcile/hr_record.h"
#include "helm/chart/chart.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "helm/values/values.h"
#include "helm/release/release.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *hr__dup(const char *s) { return strdup(s ? s : ""); }

int hr_rec_from_secret(const cJSON *secret, hr_rec_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  char e[256] = "";
  release_t *rel = NULL;
  int rc = release_secret_decode(secret, 0, &rel, e, sizeof e);
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(secret, "metadata");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
  if (rc) {
    buf_printf(err, "%s: %s", cJSON_IsString(name) ? name->valuestring : "release secret", e);
    return rc;
  }
  out->rel = rel;
  out->version = rel->version;
  out->status = hr__dup(rel->info ? rel->info->status : "unknown");
  out->manifest = hr__dup(rel->manifest);
  out->secret_name = hr__dup(cJSON_IsString(name) ? name->valuestring : "");
  if (!out->status || !out->manifest || !out->secret_name) {
    hr_rec_free(out);
    buf_puts(err, "out of memory");
    return -12;
  }
  return 0;
}

static int hr__cmp_file(const void *a, const void *b) {
  return strcmp(((const release_file_t *)a)->name, ((const release_file_t *)b)->name);
}

int hr_rec_new(const hr_spec_t *s, long long version, const hr_docs_t *docs, const char *status,
               const char *description, const hr_rec_t *first, hr_rec_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  release_t *rel = calloc(1, sizeof *rel);
  if (!rel) goto oom;
  out->rel = rel;
  release_time_t now = release_time_now();
  rel->name = hr__dup(s->release_name);
  rel->namespace = hr__dup(s->target_ns);
  rel->version = version;
  rel->manifest = hr__dup(docs->manifest);
  rel->apply_method = hr__dup("ssa");
  rel->config = cJSON_Duplicate(s->values, 1);
  rel->info = calloc(1, sizeof *rel->info);
  rel->chart = calloc(1, sizeof *rel->chart);
  if (!rel->name || !rel->namespace || !rel->manifest || !rel->apply_method || !rel->config || !rel->info || !rel->chart)
    goto oom;
  /* An upgrade keeps the release's first deployment time, as Helm does. */
  const release_t *frel = first ? first->rel : NULL;
  rel->info->first_deployed = frel && frel->info && frel->info->first_deployed.set ? frel->info->first_deployed : now;
  rel->info->last_deployed = now;
  rel->info->status = hr__dup(status);
  rel->info->description = hr__dup(description);
  rel->info->notes = hr__dup(docs->notes);
  if (!rel->info->status || !rel->info->description || !rel->info->notes) goto oom;

  release_chart_t *ch = rel->chart;
  ch->metadata = calloc(1, sizeof *ch->metadata);
  if (!ch->metadata) goto oom;
  ch->metadata->api_version = hr__dup("v2");
  ch->metadata->name = hr__dup(s->chart_name);
  ch->metadata->version = hr__dup(s->chart_version);
  if (s->app_version && *s->app_version) ch->metadata->app_version = hr__dup(s->app_version);
  /* The chart's load time, as Helm records it for charts it reads. */
  ch->modtime = now;
  if (s->chart_values && !(ch->values = cJSON_Duplicate(s->chart_values, 1))) goto oom;
  int n = cJSON_GetArraySize(s->templates);
  ch->templates = calloc((size_t)(n ? n : 1), sizeof *ch->templates);
  ch->has_templates = true;
  if (!ch->metadata->api_version || !ch->metadata->name || !ch->metadata->version || !ch->templates)
    goto oom;
  const cJSON *t;
  cJSON_ArrayForEach(t, s->templates) {
    release_file_t *f = &ch->templates[ch->ntemplates];
    size_t len = strlen(t->valuestring);
    buf_t name = BUF_INIT;
    buf_printf(&name, "templates/%s", t->string);
    f->name = buf_steal(&name);
    f->data = malloc(len ? len : 1);
    if (!f->name || !f->data) goto oom;
    memcpy(f->data, t->valuestring, len);
    f->len = len;
    f->data_nonnil = true;
    f->modtime = now;
    ch->ntemplates++;
  }
  qsort(ch->templates, ch->ntemplates, sizeof *ch->templates, hr__cmp_file);

  out->version = version;
  out->status = hr__dup(status);
  out->manifest = hr__dup(docs->manifest);
  buf_t sn = BUF_INIT;
  if (release_secret_name(rel, &sn)) goto oom;
  out->secret_name = buf_steal(&sn);
  if (!out->status || !out->manifest || !out->secret_name) goto oom;
  return 0;
oom:
  hr_rec_free(out);
  buf_puts(err, "out of memory building the release record");
  return -12;
}

int hr_rec_set_status(hr_rec_t *r, const char *status, const char *description) {
  release_t *rel = r->rel;
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
  return rel->info->status ? 0 : -12;
}

/* Values equal, where a missing map and an empty one are the same (Helm omits empty config). */
static int hr__values_equal(const cJSON *a, const cJSON *b) {
  int ea = !a || cJSON_IsNull(a) || (cJSON_IsObject(a) && !a->child);
  int eb = !b || cJSON_IsNull(b) || (cJSON_IsObject(b) && !b->child);
  if (ea || eb) return ea && eb;
  return cJSON_Compare(a, b, 1);
}

static int hr__str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

int hr_rec_matches(const hr_rec_t *r, const hr_spec_t *s) {
  const release_t *rel = r->rel;
  if (!rel || !rel->chart || !rel->chart->metadata) return 0;
  const release_chart_t *ch = rel->chart;
  const release_metadata_t *m = ch->metadata;
  if (!hr__str_eq(m->name, s->chart_name) || !hr__str_eq(m->version, s->chart_version) ||
      !hr__str_eq(m->app_version, s->app_version) || !hr__values_equal(rel->config, s->values) ||
      !hr__values_equal(ch->values, s->chart_values) || !hr__str_eq(rel->namespace, s->target_ns) ||
      ch->ntemplates != (size_t)cJSON_GetArraySize(s->templates))
    return 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, s->templates) {
    size_t len = strlen(t->valuestring), i;
    for (i = 0; i < ch->ntemplates; i++) {
      const release_file_t *f = &ch->templates[i];
      if (!strncmp(f->name, "templates/", 10) && !strcmp(f->name + 10, t->string)) break;
    }
    if (i == ch->ntemplates) return 0;
    if (ch->templates[i].len != len || memcmp(ch->templates[i].data, t->valuestring, len)) return 0;
  }
  return 1;
}

char *hr_rec_secret_json(const hr_rec_t *r, const char *ns, int creating) {
  /* Helm's driver labels a created Secret createdAt and an updated one modifiedAt. */
  release_secret_opts_t o = {.storage_namespace = ns};
  if (creating) o.created_at = (int64_t)time(NULL);
  else o.modified_at = (int64_t)time(NULL);
  cJSON *sec = NULL;
  if (release_secret_json(r->rel, &o, &sec)) return NULL;
  char *s = cJSON_PrintUnformatted(sec);
  cJSON_Delete(sec);
  return s;
}

static void hr__add_time(cJSON *o, const char *k, const release_time_t *t) {
  if (!t->set) return;
  char buf[32];
  time_t sec = (time_t)t->sec;
  struct tm tm;
  gmtime_r(&sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(o, k, buf);
}

cJSON *hr_rec_history_json(const hr_rec_t *r) {
  const release_t *rel = r->rel;
  cJSON *h = cJSON_CreateObject();
  if (!h) return NULL;
  cJSON_AddStringToObject(h, "name", rel->name ? rel->name : "");
  cJSON_AddStringToObject(h, "namespace", rel->namespace ? rel->namespace : "");
  cJSON_AddNumberToObject(h, "version", (double)r->version);
  cJSON_AddStringToObject(h, "status", r->status);
  if (rel->chart && rel->chart->metadata) {
    const release_metadata_t *m = rel->chart->metadata;
    cJSON_AddStringToObject(h, "chartName", m->name ? m->name : "");
    cJSON_AddStringToObject(h, "chartVersion", m->version ? m->version : "");
    if (m->app_version && *m->app_version) cJSON_AddStringToObject(h, "appVersion", m->app_version);
  }
  if (rel->info) {
    hr__add_time(h, "firstDeployed", &rel->info->first_deployed);
    hr__add_time(h, "lastDeployed", &rel->info->last_deployed);
  }
  return h;
}

void hr_rec_free(hr_rec_t *r) {
  free(r->status);
  free(r->manifest);
  free(r->secret_name);
  release_free(r->rel);
  memset(r, 0, sizeof *r);
}

/* ---- documents ---- */

static int hr__docs_from_set(const manifest_set_t *set, hr_docs_t *out) {
  out->v = calloc(set->ndocs ? set->ndocs : 1, sizeof *out->v);
  out->manifest = strdup(set->manifest ? set->manifest : "");
  out->notes = strdup(set->notes ? set->notes : "");
  if (!out->v || !out->manifest || !out->notes) return -12;
  for (size_t i = 0; i < set->ndocs; i++) {
    const manifest_doc_t *d = &set->docs[i];
    if (d->is_empty) continue;
    hr_doc_t *h = &out->v[out->n++];
    h->source = hr__dup(d->source);
    h->api_version = hr__dup(d->api_version);
    h->kind = hr__dup(d->kind);
    h->name = hr__dup(d->name);
    h->ns = hr__dup(d->namespace);
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/resource-policy");
    h->keep = cJSON_IsString(pol) && !strcmp(pol->valuestring, "keep");
    if (!h->source || !h->api_version || !h->kind || !h->name || !h->ns) return -12;
  }
  return 0;
}

/* Loads the inline chart as Helm would load the equivalent directory: Chart.yaml, values.yaml
 * and templates/ (JSON is YAML, so the parts taken from the object are written as JSON). */
static int hr__load_chart(const hr_spec_t *s, chart_t **out, buf_t *err) {
  size_t n = (size_t)cJSON_GetArraySize(s->templates) + 2, k = 0;
  chart_file_t *files = calloc(n, sizeof *files);
  cJSON *meta = cJSON_CreateObject();
  int rc = -12;
  if (!files || !meta) goto done;
  cJSON_AddStringToObject(meta, "apiVersion", "v2");
  cJSON_AddStringToObject(meta, "name", s->chart_name);
  cJSON_AddStringToObject(meta, "version", s->chart_version);
  if (s->app_version && *s->app_version) cJSON_AddStringToObject(meta, "appVersion", s->app_version);
  files[k].name = strdup("Chart.yaml");
  files[k].data = cJSON_PrintUnformatted(meta);
  if (!files[k].name || !files[k].data) goto done;
  files[k].len = strlen(files[k].data);
  k++;
  if (s->chart_values) {
    /* Go's encoding: exact for every double (cJSON_Print rounds some to 15 digits). */
    buf_t vals = BUF_INIT;
    files[k].name = strdup("values.yaml");
    if (!files[k].name || release_go_json_append(&vals, s->chart_values)) { buf_free(&vals); goto done; }
    files[k].data = buf_steal(&vals);
    if (!files[k].data) goto done;
    files[k].len = strlen(files[k].data);
    k++;
  }
  const cJSON *t;
  cJSON_ArrayForEach(t, s->templates) {
    buf_t name = BUF_INIT;
    buf_printf(&name, "templates/%s", t->string);
    files[k].name = buf_steal(&name);
    files[k].data = strdup(t->valuestring);
    if (!files[k].name || !files[k].data) goto done;
    files[k].len = strlen(t->valuestring);
    k++;
  }
  chart_error_t cerr = {{0}};
  rc = chart_load_files(files, k, NULL, out, &cerr);
  if (rc) buf_printf(err, "spec.chart.inline: %s", cerr.message);
done:
  if (rc == -12 && !err->len) buf_puts(err, "out of memory");
  for (size_t i = 0; files && i < n; i++) {
    free(files[i].name);
    free(files[i].data);
  }
  free(files);
  cJSON_Delete(meta);
  return rc;
}

int hr_render(const hr_spec_t *s, long long revision, int upgrade, const char *kube_version, hr_docs_t *out,
              buf_t *err) {
  memset(out, 0, sizeof *out);
  chart_t *c = NULL;
  cJSON *vals = NULL;
  render_file_t *rfiles = NULL;
  size_t nrfiles = 0;
  manifest_file_t *files = NULL;
  manifest_set_t set = {0};
  char msg[1024] = "";
  int rc = hr__load_chart(s, &c, err);
  if (rc) return rc;
  chart_error_t cerr = {{0}};
  if ((rc = chart_process_dependencies(c, s->values, &cerr))) {
    buf_puts(err, cerr.message);
    goto done;
  }
  if ((rc = values_coalesce(c, s->values, &vals, msg, sizeof msg)) ||
      (rc = values_validate_schema(c, vals, msg, sizeof msg))) {
    buf_puts(err, msg);
    goto done;
  }
  render_opts_t ro = {.release_name = s->release_name, .namespace = s->target_ns, .revision = (int)revision,
                      .is_upgrade = upgrade != 0, .kube_version = kube_version};
  if ((rc = render_chart(c, vals, &ro, &rfiles, &nrfiles, err))) goto done;
  /* The rendered files, named as inside the chart, go through Helm's split and sort. */
  files = calloc(nrfiles ? nrfiles : 1, sizeof *files);
  if (!files) { rc = -12; goto done; }
  size_t cl = strlen(s->chart_name);
  for (size_t i = 0; i < nrfiles; i++) {
    const char *name = rfiles[i].name;
    if (!strncmp(name, s->chart_name, cl) && name[cl] == '/') name += cl + 1;
    files[i] = (manifest_file_t){name, rfiles[i].text, rfiles[i].len};
  }
  manifest_error_t merr = {0};
  if ((rc = manifest_build(s->chart_name, files, nrfiles, MANIFEST_INSTALL_ORDER, &set, &merr))) {
    buf_puts(err, merr.message[0] ? merr.message : "cannot build the manifests");
    goto done;
  }
  if (set.nhooks) {
    buf_printf(err, "%s: Helm hooks (helm.sh/hook) are not supported by this rudder version yet", set.hooks[0].doc.source);
    rc = -95;
    goto done;
  }
  rc = hr__docs_from_set(&set, out);
  for (size_t k = 0, j = 0; rc == 0 && k < set.ndocs; k++) {
    if (set.docs[k].is_empty) continue;
    rc = manifest_object_json(&set.docs[k], s->release_name, s->target_ns, NULL, &out->v[j++].obj, &merr);
    if (rc) buf_puts(err, merr.message);
  }
done:
  if (rc && !err->len) buf_puts(err, rc == -12 ? "out of memory" : "cannot render the chart");
  if (rc) hr_docs_free(out);
  manifest_set_free(&set);
  free(files);
  render_files_free(rfiles, nrfiles);
  cJSON_Delete(vals);
  chart_free(c);
  return rc;
}

int hr_docs_from_manifest(const char *manifest, int uninstall, hr_docs_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  manifest_set_t set = {0};
  manifest_error_t merr = {0};
  int rc = manifest_parse_release(manifest, strlen(manifest), uninstall ? MANIFEST_UNINSTALL_ORDER : MANIFEST_INSTALL_ORDER,
                                  &set, &merr);
  if (rc) {
    buf_puts(err, merr.message[0] ? merr.message : "cannot read the release manifest");
    return rc;
  }
  rc = hr__docs_from_set(&set, out);
  manifest_set_free(&set);
  if (rc) {
    buf_puts(err, "out of memory");
    hr_docs_free(out);
  }
  return rc;
}

void hr_docs_free(hr_docs_t *d) {
  for (size_t i = 0; i < d->n; i++) {
    hr_doc_t *h = &d->v[i];
    free(h->source); free(h->api_version); free(h->kind); free(h->name); free(h->ns);
    free(h->group); free(h->version); free(h->resource);
    cJSON_Delete(h->obj);
  }
  free(d->v);
  free(d->manifest);
  free(d->notes);
  memset(d, 0, sizeof *d);
}
