#include "reconcile/hr_spec.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *hr__dup(const char *s) { return s ? strdup(s) : NULL; }

static const char *hr__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

long hr_duration_ms(const char *s) {
  if (!s || !*s) return -1;
  double total = 0;
  const char *p = s;
  while (*p) {
    char *end;
    if (!isdigit((unsigned char)*p)) return -1;
    double n = strtod(p, &end);
    if (end == p) return -1;
    p = end;
    double unit;
    if (!strncmp(p, "ms", 2)) { unit = 1; p += 2; }
    else if (*p == 's') { unit = 1000; p++; }
    else if (*p == 'm') { unit = 60000; p++; }
    else if (*p == 'h') { unit = 3600000; p++; }
    else return -1;
    total += n * unit;
  }
  return total > 1e15 ? -1 : (long)total;
}

void hr_spec_free(hr_spec_t *s) {
  free(s->ns); free(s->name); free(s->uid); free(s->resource_version);
  free(s->release_name); free(s->target_ns); free(s->storage_ns);
  free(s->chart_name); free(s->chart_version); free(s->app_version);
  cJSON_Delete(s->templates); cJSON_Delete(s->chart_values); cJSON_Delete(s->values);
  cJSON_Delete(s->finalizers); cJSON_Delete(s->conditions);
  memset(s, 0, sizeof *s);
}

int hr_spec_parse(const cJSON *obj, hr_spec_t *s, buf_t *err) {
  memset(s, 0, sizeof *s);
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  s->ns = hr__dup(hr__str(meta, "namespace"));
  s->name = hr__dup(hr__str(meta, "name"));
  s->uid = hr__dup(hr__str(meta, "uid"));
  s->resource_version = hr__dup(hr__str(meta, "resourceVersion"));
  if (!s->ns || !s->name) { buf_puts(err, "object has no metadata.namespace or metadata.name"); return -22; }
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
  s->generation = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0;
  s->deleting = hr__str(meta, "deletionTimestamp") != NULL;
  const cJSON *fins = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
  if (cJSON_IsArray(fins)) {
    s->finalizers = cJSON_Duplicate(fins, 1);
    const cJSON *f;
    cJSON_ArrayForEach(f, fins)
      if (cJSON_IsString(f) && !strcmp(f->valuestring, HR_FINALIZER)) s->has_finalizer = 1;
  }
  const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
  if (cJSON_IsArray(conds)) s->conditions = cJSON_Duplicate(conds, 1);
  const cJSON *lar = cJSON_GetObjectItemCaseSensitive(status, "lastAppliedRevision");
  s->last_applied_revision = cJSON_IsNumber(lar) ? (long long)lar->valuedouble : 0;

  const char *rn = hr__str(spec, "releaseName");
  s->release_name = hr__dup(rn && *rn ? rn : s->name);
  const char *tn = hr__str(spec, "targetNamespace");
  s->target_ns = hr__dup(tn && *tn ? tn : s->ns);
  const char *sn = hr__str(spec, "storageNamespace");
  s->storage_ns = hr__dup(sn && *sn ? sn : s->target_ns);
  s->max_history = HR_DEFAULT_MAX_HISTORY;
  s->interval_ms = HR_DEFAULT_INTERVAL_MS;
  if (!s->release_name || !s->target_ns || !s->storage_ns) { buf_puts(err, "out of memory"); return -12; }

  if (!spec) { buf_puts(err, "spec is missing"); return -22; }
  const cJSON *mh = cJSON_GetObjectItemCaseSensitive(spec, "maxHistory");
  if (cJSON_IsNumber(mh)) {
    if (mh->valuedouble < 0) { buf_puts(err, "spec.maxHistory: must not be negative"); return -22; }
    s->max_history = (int)mh->valuedouble;
  }
  const char *iv = hr__str(spec, "interval");
  if (iv) {
    long ms = hr_duration_ms(iv);
    if (ms <= 0) { buf_printf(err, "spec.interval: \"%s\" is not a positive duration like 5m or 1h", iv); return -22; }
    s->interval_ms = ms;
  }
  s->suspend = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend"));
  if (strlen(s->release_name) > 53) {
    buf_printf(err, "release name \"%s\" is longer than 53 characters", s->release_name);
    return -22;
  }

  const cJSON *values = cJSON_GetObjectItemCaseSensitive(spec, "values");
  if (values && !cJSON_IsObject(values) && !cJSON_IsNull(values)) { buf_puts(err, "spec.values: must be an object"); return -22; }
  s->values = cJSON_IsObject(values) ? cJSON_Duplicate(values, 1) : cJSON_CreateObject();

  const cJSON *chart = cJSON_GetObjectItemCaseSensitive(spec, "chart");
  if (!cJSON_IsObject(chart)) { buf_puts(err, "spec.chart is missing"); return -22; }
  const cJSON *inl = cJSON_GetObjectItemCaseSensitive(chart, "inline");
  if (!inl) {
    static const char *const others[] = {"repository", "url", "configMapRef", "secretRef"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
      if (cJSON_GetObjectItemCaseSensitive(chart, others[i])) {
        buf_printf(err, "spec.chart.%s: this rudder version installs only inline charts (spec.chart.inline)", others[i]);
        return -95;
      }
    buf_puts(err, "spec.chart: no chart source set (inline, repository, url, configMapRef or secretRef)");
    return -22;
  }
  const char *cn = hr__str(inl, "chartName");
  const char *cv = hr__str(inl, "chartVersion");
  s->chart_name = hr__dup(cn && *cn ? cn : s->release_name);
  s->chart_version = hr__dup(cv && *cv ? cv : "0.1.0");
  s->app_version = hr__dup(hr__str(inl, "appVersion"));
  const cJSON *tpls = cJSON_GetObjectItemCaseSensitive(inl, "templates");
  if (!cJSON_IsObject(tpls) || !tpls->child) { buf_puts(err, "spec.chart.inline.templates: must map at least one file name to its text"); return -22; }
  const cJSON *t;
  cJSON_ArrayForEach(t, tpls) {
    if (!cJSON_IsString(t)) { buf_printf(err, "spec.chart.inline.templates[%s]: must be a string", t->string); return -22; }
    if (!*t->string || strchr(t->string, '/') || !strcmp(t->string, "..") || !strcmp(t->string, ".")) {
      buf_printf(err, "spec.chart.inline.templates: \"%s\" is not a plain file name", t->string);
      return -22;
    }
  }
  s->templates = cJSON_Duplicate(tpls, 1);
  const cJSON *cvals = cJSON_GetObjectItemCaseSensitive(inl, "values");
  s->chart_values = cJSON_IsObject(cvals) ? cJSON_Duplicate(cvals, 1) : NULL; /* Helm: null without values.yaml */
  if (!s->chart_name || !s->chart_version || !s->templates || (cvals && !s->chart_values) || !s->values) {
    buf_puts(err, "out of memory");
    return -12;
  }
  return 0;
}
