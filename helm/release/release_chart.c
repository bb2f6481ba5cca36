/* A loaded chart as Helm's release record keeps it (chart.Chart's JSON: metadata, templates,
 * values, schema, files; subcharts are not part of it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helm/chart/chart.h"
#include "helm/release/release.h"

static int rc__dup(char **dst, const char *s) {
  if (!s) return 0;
  *dst = strdup(s);
  return *dst ? 0 : -ENOMEM;
}

static int rc__strv(char ***dst, size_t *n, char *const *src, size_t count) {
  *n = 0;
  if (!count) return 0;
  if (!(*dst = calloc(count, sizeof **dst))) return -ENOMEM;
  for (size_t i = 0; i < count; i++, (*n)++)
    if (!((*dst)[i] = strdup(src[i] ? src[i] : ""))) return -ENOMEM;
  return 0;
}

static int rc__files(release_file_t **dst, size_t *n, const chart_file_t *src, size_t count, release_time_t t) {
  *n = 0;
  if (!(*dst = calloc(count ? count : 1, sizeof **dst))) return -ENOMEM;
  for (size_t i = 0; i < count; i++) {
    release_file_t *f = &(*dst)[i];
    f->name = strdup(src[i].name);
    f->data = malloc(src[i].len ? src[i].len : 1);
    if (!f->name || !f->data) {
      free(f->name);
      free(f->data);
      return -ENOMEM;
    }
    memcpy(f->data, src[i].data, src[i].len);
    f->len = src[i].len;
    f->data_nonnil = true;
    f->modtime = t;
    (*n)++;
  }
  return 0;
}

static int rc__meta(release_metadata_t *m, const chart_meta_t *s) {
  if (rc__dup(&m->name, s->name) || rc__dup(&m->home, s->home) || rc__dup(&m->version, s->version) ||
      rc__dup(&m->description, s->description) || rc__dup(&m->icon, s->icon) ||
      rc__dup(&m->api_version, s->api_version) || rc__dup(&m->condition, s->condition) ||
      rc__dup(&m->tags, s->tags) || rc__dup(&m->app_version, s->app_version) ||
      rc__dup(&m->kube_version, s->kube_version) || rc__dup(&m->type, s->type) ||
      rc__strv(&m->sources, &m->nsources, s->sources, s->nsources) ||
      rc__strv(&m->keywords, &m->nkeywords, s->keywords, s->nkeywords))
    return -ENOMEM;
  m->deprecated = s->deprecated != 0;
  if (s->annotations && !(m->annotations = cJSON_Duplicate(s->annotations, 1))) return -ENOMEM;
  if (s->nmaintainers) {
    if (!(m->maintainers = calloc(s->nmaintainers, sizeof *m->maintainers))) return -ENOMEM;
    for (size_t i = 0; i < s->nmaintainers; i++, m->nmaintainers++)
      if (rc__dup(&m->maintainers[i].name, s->maintainers[i].name) ||
          rc__dup(&m->maintainers[i].email, s->maintainers[i].email) ||
          rc__dup(&m->maintainers[i].url, s->maintainers[i].url))
        return -ENOMEM;
  }
  if (s->ndeps) {
    if (!(m->dependencies = calloc(s->ndeps, sizeof *m->dependencies))) return -ENOMEM;
    for (size_t i = 0; i < s->ndeps; i++, m->ndependencies++) {
      release_dependency_t *d = &m->dependencies[i];
      const chart_dep_t *sd = &s->deps[i];
      if (rc__dup(&d->name, sd->name) || rc__dup(&d->version, sd->version) ||
          rc__dup(&d->repository, sd->repository) || rc__dup(&d->condition, sd->condition) ||
          rc__dup(&d->alias, sd->alias) || rc__strv(&d->tags, &d->ntags, sd->tags, sd->ntags))
        return -ENOMEM;
      d->enabled = sd->enabled != 0;
      if (sd->import_values && !(d->import_values = cJSON_Duplicate(sd->import_values, 1))) return -ENOMEM;
    }
  }
  return 0;
}

int release_set_chart(release_t *rel, const chart_t *c, release_time_t t) {
  release_chart_t *ch = calloc(1, sizeof *ch);
  if (!ch) return -ENOMEM;
  rel->chart = ch; /* freed with rel, complete or not */
  if (!(ch->metadata = calloc(1, sizeof *ch->metadata)) || rc__meta(ch->metadata, &c->meta)) return -ENOMEM;
  ch->modtime = t;
  if (rc__files(&ch->templates, &ch->ntemplates, c->templates, c->ntemplates, t)) return -ENOMEM;
  ch->has_templates = c->ntemplates > 0;
  if (rc__files(&ch->files, &ch->nfiles, c->files, c->nfiles, t)) return -ENOMEM;
  ch->has_files = c->nfiles > 0;
  if (c->has_values_file && c->values && !(ch->values = cJSON_Duplicate(c->values, 1))) return -ENOMEM;
  if (c->schema) {
    if (!(ch->schema = malloc(c->schema_len ? c->schema_len : 1))) return -ENOMEM;
    memcpy(ch->schema, c->schema, c->schema_len);
    ch->schema_len = c->schema_len;
    ch->has_schema = true;
    ch->schema_modtime = t;
  }
  return 0;
}
