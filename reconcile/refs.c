/* Objects releases read, watched by name (refs.h). */
#include "reconcile/refs.h"
#include "base/log.h"
#include "watch/informer.h"
#include <stdlib.h>
#include <string.h>

typedef struct ref_s ref_t;
typedef struct owner_s owner_t;

struct ref_s { /* one watched object */
  ref_t *next;   /* in its bucket */
  refs_t *r;
  informer_t *inf;
  bool synced;
  char **owners;
  size_t nowners;
  char key[];    /* "s|ns|name" or "c|ns|name" */
};

struct owner_s {
  owner_t *next;
  ref_t **refs;
  size_t nrefs;
  char key[];
};

struct refs_s {
  kube_client_t *c;
  refs_changed_cb cb;
  void *data;
  ref_t **rb;    /* buckets of watched objects */
  owner_t **ob;  /* buckets of owners */
  size_t nb;     /* buckets in each (fixed; a power of two) */
  size_t nrefs;
  int stopping, pending;
  void (*stop_cb)(void *);
  void *stop_data;
};

#define REFS_BUCKETS 1024

static size_t refs__hash(const char *s) {
  size_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

int refs_new(kube_client_t *c, refs_changed_cb cb, void *data, refs_t **out) {
  refs_t *r = calloc(1, sizeof *r);
  if (!r) return UV_ENOMEM;
  r->nb = REFS_BUCKETS;
  r->rb = calloc(r->nb, sizeof *r->rb);
  r->ob = calloc(r->nb, sizeof *r->ob);
  if (!r->rb || !r->ob) {
    free(r->rb);
    free(r->ob);
    free(r);
    return UV_ENOMEM;
  }
  r->c = c;
  r->cb = cb;
  r->data = data;
  *out = r;
  return 0;
}

size_t refs_watched(const refs_t *r) { return r->nrefs; }

static void refs__changed(ref_t *f) {
  refs_t *r = f->r;
  if (!f->synced || r->stopping) return;
  /* The callback may call refs_set: walk a copy of the owners. */
  size_t n = f->nowners;
  char **copy = n ? calloc(n, sizeof *copy) : NULL;
  for (size_t i = 0; copy && i < n; i++) copy[i] = strdup(f->owners[i]);
  for (size_t i = 0; copy && i < n; i++)
    if (copy[i]) r->cb(copy[i], r->data);
  for (size_t i = 0; copy && i < n; i++) free(copy[i]);
  free(copy);
}
static void refs__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) { refs__changed(data); }
static void refs__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  refs__changed(data);
}
static void refs__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) { refs__changed(data); }
static void refs__on_synced(informer_t *inf, void *data) { ((ref_t *)data)->synced = true; }

static void refs__free_ref(ref_t *f) {
  for (size_t i = 0; i < f->nowners; i++) free(f->owners[i]);
  free(f->owners);
  free(f);
}

static void refs__maybe_done(refs_t *r) {
  if (!r->stopping || r->pending) return;
  void (*cb)(void *) = r->stop_cb;
  void *data = r->stop_data;
  free(r->rb);
  free(r->ob);
  free(r);
  if (cb) cb(data);
}

static void refs__ref_stopped(void *data) {
  ref_t *f = data;
  refs_t *r = f->r;
  refs__free_ref(f);
  r->pending--;
  refs__maybe_done(r);
}

static ref_t *refs__find(refs_t *r, const char *key, ref_t ***slot) {
  ref_t **p = &r->rb[refs__hash(key) & (r->nb - 1)];
  for (; *p; p = &(*p)->next)
    if (!strcmp((*p)->key, key)) break;
  if (slot) *slot = p;
  return *p;
}

static ref_t *refs__watch(refs_t *r, const refs_obj_t *o) {
  size_t len = strlen(o->ns) + strlen(o->name) + 4;
  ref_t *f = calloc(1, sizeof *f + len + 1);
  if (!f) return NULL;
  snprintf(f->key, len + 1, "%c|%s|%s", o->secret ? 's' : 'c', o->ns, o->name);
  ref_t **slot;
  ref_t *have = refs__find(r, f->key, &slot);
  if (have) {
    free(f);
    return have;
  }
  f->r = r;
  buf_t path = BUF_INIT, sel = BUF_INIT;
  kube_path(&path, "", "v1", o->secret ? "secrets" : "configmaps", o->ns, NULL, NULL);
  buf_printf(&sel, "metadata.name=%s", o->name);
  static const char *const keep[] = {NULL}; /* identity only: the data is read when used */
  informer_opts_t io = {.path = path.data, .field_selector = sel.data, .keep = keep};
  informer_handlers_t h = {.on_add = refs__on_add, .on_update = refs__on_update, .on_delete = refs__on_delete,
                           .on_synced = refs__on_synced, .data = f};
  int rc = path.data && sel.data ? informer_start(r->c, &io, &h, &f->inf) : UV_ENOMEM;
  buf_free(&path);
  buf_free(&sel);
  if (rc) {
    free(f);
    return NULL;
  }
  *slot = f;
  r->nrefs++;
  return f;
}

/* Drops owner from f; the watch stops with its last owner. */
static void refs__unref(refs_t *r, ref_t *f, const char *owner) {
  for (size_t i = 0; i < f->nowners; i++)
    if (!strcmp(f->owners[i], owner)) {
      free(f->owners[i]);
      f->owners[i] = f->owners[--f->nowners];
      break;
    }
  if (f->nowners) return;
  ref_t **slot;
  refs__find(r, f->key, &slot);
  *slot = f->next;
  r->nrefs--;
  r->pending++;
  informer_stop(f->inf, refs__ref_stopped, f);
}

static int refs__has(ref_t *const *v, size_t n, const ref_t *f) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == f) return 1;
  return 0;
}

int refs_set(refs_t *r, const char *owner, const refs_obj_t *objs, size_t n) {
  if (r->stopping) return 0;
  owner_t **op = &r->ob[refs__hash(owner) & (r->nb - 1)];
  while (*op && strcmp((*op)->key, owner)) op = &(*op)->next;
  owner_t *o = *op;
  if (!o && !n) return 0;
  ref_t **now = n ? calloc(n, sizeof *now) : NULL;
  if (n && !now) return UV_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    ref_t *f = refs__watch(r, &objs[i]);
    if (!f) goto oom;
    if (refs__has(now, k, f)) continue;
    now[k++] = f;
    if (!refs__has(o ? o->refs : NULL, o ? o->nrefs : 0, f)) {
      char **v = realloc(f->owners, (f->nowners + 1) * sizeof *v);
      if (!v) goto oom;
      f->owners = v;
      if (!(f->owners[f->nowners] = strdup(owner))) goto oom;
      f->nowners++;
    }
  }
  if (!o && !(o = calloc(1, sizeof *o + strlen(owner) + 1))) goto oom;
  if (!*op) {
    strcpy(o->key, owner);
    *op = o;
  }
  for (size_t i = 0; i < o->nrefs; i++)
    if (!refs__has(now, k, o->refs[i])) refs__unref(r, o->refs[i], owner);
  free(o->refs);
  o->refs = now;
  o->nrefs = k;
  if (!k) {
    *op = o->next;
    free(o);
  }
  return 0;
oom:
  /* Undo the watches and owner entries added for objects the owner did not read before. */
  for (size_t i = 0; i < k; i++)
    if (!refs__has(o ? o->refs : NULL, o ? o->nrefs : 0, now[i])) refs__unref(r, now[i], owner);
  free(now);
  return UV_ENOMEM;
}

void refs_stop(refs_t *r, void (*cb)(void *data), void *data) {
  r->stopping = 1;
  r->stop_cb = cb;
  r->stop_data = data;
  for (size_t b = 0; b < r->nb; b++) {
    for (owner_t *o = r->ob[b], *nx; o; o = nx) {
      nx = o->next;
      free(o->refs);
      free(o);
    }
    for (ref_t *f = r->rb[b], *nx; f; f = nx) {
      nx = f->next;
      r->pending++;
      informer_stop(f->inf, refs__ref_stopped, f);
    }
  }
  refs__maybe_done(r);
}
