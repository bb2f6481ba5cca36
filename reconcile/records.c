/* One watch of Helm's release records for all the engines (records.h). */
#include "reconcile/records.h"
#include "base/buf.h"
#include <stdlib.h>
#include <string.h>

/* The records the cache holds per "namespace/release name", kept on its every add and delete. */
typedef struct rec__count_s {
  struct rec__count_s *next;
  unsigned n;
  char key[];
} rec__count_t;

typedef struct rec__sub_s {
  struct rec__sub_s *next;
  informer_handlers_t h;
  int gone; /* unsubscribed while events were being delivered: freed after them */
} rec__sub_t;

struct records_s {
  informer_t *inf;
  char *ns;
  rec__count_t **b;
  size_t nb, n;
  rec__sub_t *subs;
  int delivering;
  void (*stop_cb)(void *data);
  void *stop_data;
};

static size_t rec__hash(const char *s) {
  size_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The entry of key, made (at 0) when make and missing; NULL when missing or out of memory. */
static rec__count_t *rec__get(records_t *r, const char *key, int make) {
  if (r->nb)
    for (rec__count_t *c = r->b[rec__hash(key) & (r->nb - 1)]; c; c = c->next)
      if (!strcmp(c->key, key)) return c;
  if (!make) return NULL;
  if (r->n + 1 > r->nb) {
    size_t nb = r->nb ? r->nb * 2 : 64;
    rec__count_t **b = calloc(nb, sizeof *b);
    if (!b) return NULL;
    for (size_t i = 0; i < r->nb; i++)
      for (rec__count_t *c = r->b[i], *nx; c; c = nx) {
        nx = c->next;
        size_t h = rec__hash(c->key) & (nb - 1);
        c->next = b[h];
        b[h] = c;
      }
    free(r->b);
    r->b = b;
    r->nb = nb;
  }
  size_t len = strlen(key);
  rec__count_t *c = calloc(1, sizeof *c + len + 1);
  if (!c) return NULL;
  memcpy(c->key, key, len + 1);
  size_t h = rec__hash(key) & (r->nb - 1);
  c->next = r->b[h];
  r->b[h] = c;
  r->n++;
  return c;
}

/* Counts a record Secret (its namespace and `name` label) in (delta 1) or out (-1); an entry at 0 goes. */
static void rec__note(records_t *r, const cJSON *secret, int delta) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(secret, "metadata");
  const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "labels"), "name");
  if (!cJSON_IsString(ns) || !cJSON_IsString(name)) return;
  buf_t k = BUF_INIT;
  buf_printf(&k, "%s/%s", ns->valuestring, name->valuestring);
  rec__count_t *c = k.data ? rec__get(r, k.data, delta > 0) : NULL;
  if (c && delta > 0) {
    c->n++;
  } else if (c && c->n && !--c->n) {
    for (rec__count_t **p = &r->b[rec__hash(k.data) & (r->nb - 1)]; *p; p = &(*p)->next)
      if (*p == c) {
        *p = c->next;
        free(c);
        r->n--;
        break;
      }
  }
  buf_free(&k);
}

/* Frees the subscribers that went while events were delivered. */
static void rec__reap(records_t *r) {
  for (rec__sub_t **p = &r->subs; *p;) {
    rec__sub_t *s = *p;
    if (s->gone) {
      *p = s->next;
      free(s);
    } else {
      p = &s->next;
    }
  }
}

static void rec__add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  records_t *r = data;
  rec__note(r, obj, 1);
  r->delivering++;
  for (rec__sub_t *s = r->subs; s; s = s->next)
    if (!s->gone && s->h.on_add) s->h.on_add(inf, key, obj, s->h.data);
  if (!--r->delivering) rec__reap(r);
}

static void rec__update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  records_t *r = data;
  rec__note(r, old, -1); /* its name label may have changed */
  rec__note(r, obj, 1);
  r->delivering++;
  for (rec__sub_t *s = r->subs; s; s = s->next)
    if (!s->gone && s->h.on_update) s->h.on_update(inf, key, old, obj, s->h.data);
  if (!--r->delivering) rec__reap(r);
}

static void rec__delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  records_t *r = data;
  rec__note(r, obj, -1);
  r->delivering++;
  for (rec__sub_t *s = r->subs; s; s = s->next)
    if (!s->gone && s->h.on_delete) s->h.on_delete(inf, key, obj, s->h.data);
  if (!--r->delivering) rec__reap(r);
}

int records_start(kube_client_t *c, const char *ns, records_t **out) {
  records_t *r = calloc(1, sizeof *r);
  if (!r || (ns && *ns && !(r->ns = strdup(ns)))) {
    free(r);
    return UV_ENOMEM;
  }
  buf_t path = BUF_INIT;
  kube_path(&path, "", "v1", "secrets", r->ns, NULL, NULL);
  static const char *const keep[] = {"metadata.labels", NULL};
  /* Only the labels are read: the metadata alone is asked for, so that the release data (a few KB
   * per record, per write) is neither sent on the watch nor parsed. Compact: a record's labels print
   * to a few hundred bytes, a tree of them is some 1.6 KB. */
  informer_opts_t o = {.path = path.data, .label_selector = "owner=helm", .keep = keep,
                       .metadata_only = true, .compact = true};
  informer_handlers_t h = {.on_add = rec__add, .on_update = rec__update, .on_delete = rec__delete, .data = r};
  int rc = path.data ? informer_start(c, &o, &h, &r->inf) : UV_ENOMEM;
  buf_free(&path);
  if (rc) {
    free(r->ns);
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

int records_subscribe(records_t *r, const informer_handlers_t *h) {
  rec__sub_t *s = calloc(1, sizeof *s);
  if (!s) return UV_ENOMEM;
  s->h = *h;
  s->next = r->subs;
  r->subs = s;
  return 0;
}

void records_unsubscribe(records_t *r, void *data) {
  for (rec__sub_t *s = r->subs; s; s = s->next)
    if (!s->gone && s->h.data == data) s->gone = 1;
  if (!r->delivering) rec__reap(r);
}

bool records_synced(const records_t *r) { return r->inf && informer_has_synced(r->inf); }

bool records_covers(const records_t *r, const char *ns) { return !r->ns || (ns && !strcmp(r->ns, ns)); }

unsigned records_count(const records_t *r, const char *ns, const char *name) {
  buf_t k = BUF_INIT;
  buf_printf(&k, "%s/%s", ns, name);
  const rec__count_t *c = k.data ? rec__get((records_t *)r, k.data, 0) : NULL;
  buf_free(&k);
  return c ? c->n : 0;
}

informer_memory_t records_memory(const records_t *r) {
  informer_memory_t m = {0};
  if (r->inf) m = informer_memory(r->inf);
  return m;
}

static void rec__stopped(void *data) {
  records_t *r = data;
  for (size_t i = 0; i < r->nb; i++)
    for (rec__count_t *c = r->b[i], *nx; c; c = nx) {
      nx = c->next;
      free(c);
    }
  free(r->b);
  for (rec__sub_t *s = r->subs, *nx; s; s = nx) {
    nx = s->next;
    free(s);
  }
  void (*cb)(void *) = r->stop_cb;
  void *cd = r->stop_data;
  free(r->ns);
  free(r);
  if (cb) cb(cd);
}

void records_stop(records_t *r, void (*cb)(void *data), void *data) {
  r->stop_cb = cb;
  r->stop_data = data;
  informer_t *inf = r->inf;
  r->inf = NULL;
  if (inf) informer_stop(inf, rec__stopped, r);
  else rec__stopped(r);
}
