/* An in-process fake Kubernetes API server for unit tests, on test_watch_server.h (loopback HTTP/1.1).
 *
 * It keeps an in-memory store of objects (secrets, configmaps, services, namespaces, deployments,
 * rudder.dev HelmReleases, CRDs) with resourceVersions, uids and generations (bumped when spec
 * changes), finalizers and deletionTimestamp, and answers: discovery (/version, /api, /apis and the
 * group-versions), LIST (equality label selectors) and WATCH (chunked events from a resourceVersion,
 * replayed from an event log), GET, POST, PUT, DELETE (uid/resourceVersion preconditions), merge
 * patches of objects and of /status (a metadata.resourceVersion in the patch is a precondition),
 * and server-side apply (application/apply-patch+yaml with a JSON body: the object is stored).
 *
 * Every request is logged (method — WATCH for watches — path and query) and countable; rules inject
 * per request: an error status with a Kubernetes Status body, a delay, a hang (never answered, not
 * processed), a hang after processing, or a dropped connection.
 *
 * Tests also change the store directly (fk_put, fk_merge, fk_delete): watchers hear of it as they
 * would of any other writer. */
#pragma once
#include "test_watch_server.h"
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

typedef struct fk_s fk_t;

typedef enum { FK_ERROR = 1, FK_DELAY, FK_HANG, FK_HANG_AFTER, FK_DROP } fk_act_t;

typedef struct fk_rule_s {
  struct fk_rule_s *next;
  char method[16];    /* "" any; "WATCH" for watches */
  char path[512];     /* exact path (no query); a trailing '*' makes it a prefix; "" any */
  char body_has[256]; /* "" any; else the request body must contain it */
  int skip;           /* let this many matches through first */
  int times;          /* affect this many (then the rule is spent); < 0: forever */
  fk_act_t act;
  int status;         /* FK_ERROR */
  char reason[64], message[512];
  uint64_t delay_ms;  /* FK_DELAY */
  int hits;           /* requests this rule affected */
} fk_rule_t;

typedef struct fk_req_s {
  char *method, *path, *query, *body;
  uint64_t at_ms;
} fk_req_t;

typedef struct fk_obj_s {
  struct fk_obj_s *next;
  char *gv, *resource, *ns, *name; /* ns "" for cluster-scoped */
  cJSON *obj;
} fk_obj_t;

typedef struct fk_event_s {
  long long rv;
  char *gv, *resource, *ns, *type;
  cJSON *obj;
} fk_event_t;

typedef struct fk_watcher_s {
  struct fk_watcher_s *next;
  tconn_t *c;
  char *gv, *resource, *ns, *sel; /* ns NULL: all namespaces */
} fk_watcher_t;

struct fk_s {
  tsrv_t srv;
  uv_loop_t *loop;
  char url[64];
  long long rv;
  int uids;
  fk_obj_t *objs;
  fk_event_t *ev;
  size_t nev, capev;
  fk_watcher_t *watchers;
  fk_req_t *log;
  size_t nlog, caplog;
  fk_rule_t *rules;
  int held;          /* requests hung so far (FK_HANG and FK_HANG_AFTER) */
  int dropped;
  const char *git_version;
};

static fk_t *fk__self; /* the handler has no user pointer: one fake per process */

/* ---- small helpers ---- */

static inline char *fk__dup(const char *s) { return s ? strdup(s) : NULL; }
static inline char *fk__ndup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

static inline const char *fk__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline cJSON *fk__meta(cJSON *o) {
  cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
  if (!cJSON_IsObject(m)) {
    cJSON_DeleteItemFromObjectCaseSensitive(o, "metadata");
    m = cJSON_AddObjectToObject(o, "metadata");
  }
  return m;
}

static inline void fk__set_str(cJSON *o, const char *k, const char *v) {
  cJSON_DeleteItemFromObjectCaseSensitive(o, k);
  cJSON_AddStringToObject(o, k, v);
}

static inline void fk__set_num(cJSON *o, const char *k, double v) {
  cJSON_DeleteItemFromObjectCaseSensitive(o, k);
  cJSON_AddNumberToObject(o, k, v);
}

static inline void fk__urldecode(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
      char h[3] = {s[1], s[2], 0};
      *o++ = (char)strtol(h, NULL, 16);
      s += 2;
    } else if (*s == '+') {
      *o++ = ' ';
    } else {
      *o++ = *s;
    }
  }
  *o = 0;
}

/* The decoded value of query parameter key into out; NULL when absent. */
static inline const char *fk_query(const char *query, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *p = query; p && *p;) {
    const char *amp = strchr(p, '&');
    size_t len = amp ? (size_t)(amp - p) : strlen(p);
    if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
      snprintf(out, n, "%.*s", (int)(len - kl - 1), p + kl + 1);
      fk__urldecode(out);
      return out;
    }
    if (len == kl && !strncmp(p, key, kl)) {
      out[0] = 0;
      return out;
    }
    p = amp ? amp + 1 : NULL;
  }
  return NULL;
}

/* Equality-based label selectors ("a=b,c==d,e!=f,g"): 1 when labels match. */
static inline int fk__labels_match(const cJSON *obj, const char *sel) {
  if (!sel || !*sel) return 1;
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
  char *s = strdup(sel), *save = NULL;
  int ok = 1;
  for (char *t = strtok_r(s, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
    char *eq = strstr(t, "!=");
    int neg = eq != NULL;
    if (!eq) eq = strchr(t, '=');
    if (!eq) {
      ok = fk__str(labels, t) != NULL;
      continue;
    }
    *eq = 0;
    const char *v = eq + (neg ? 2 : 1);
    if (*v == '=') v++;
    const char *have = fk__str(labels, t);
    ok = neg ? !have || strcmp(have, v) : have && !strcmp(have, v);
  }
  free(s);
  return ok;
}

/* ---- the resources it knows ---- */

typedef struct fk_res_s {
  const char *gv, *resource, *kind, *list_kind, *api_version;
  int namespaced, has_generation, has_status;
} fk_res_t;

static const fk_res_t fk__resources[] = {
    {"/api/v1", "secrets", "Secret", "SecretList", "v1", 1, 0, 0},
    {"/api/v1", "configmaps", "ConfigMap", "ConfigMapList", "v1", 1, 0, 0},
    {"/api/v1", "services", "Service", "ServiceList", "v1", 1, 0, 1},
    {"/api/v1", "namespaces", "Namespace", "NamespaceList", "v1", 0, 0, 1},
    {"/api/v1", "events", "Event", "EventList", "v1", 1, 0, 0},
    {"/apis/apps/v1", "deployments", "Deployment", "DeploymentList", "apps/v1", 1, 1, 1},
    {"/apis/rudder.dev/v1alpha1", "helmreleases", "HelmRelease", "HelmReleaseList", "rudder.dev/v1alpha1", 1, 1, 1},
    {"/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition",
     "CustomResourceDefinitionList", "apiextensions.k8s.io/v1", 0, 1, 1},
};

static inline const fk_res_t *fk__res(const char *gv, const char *resource) {
  for (size_t i = 0; i < sizeof fk__resources / sizeof *fk__resources; i++)
    if (!strcmp(fk__resources[i].gv, gv) && !strcmp(fk__resources[i].resource, resource)) return &fk__resources[i];
  return NULL;
}

static inline char *fk__discovery_doc(const char *gv) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "kind", "APIResourceList");
  cJSON_AddStringToObject(d, "groupVersion", !strcmp(gv, "/api/v1") ? "v1" : gv + 6);
  cJSON *arr = cJSON_AddArrayToObject(d, "resources");
  int any = 0;
  for (size_t i = 0; i < sizeof fk__resources / sizeof *fk__resources; i++) {
    const fk_res_t *r = &fk__resources[i];
    if (strcmp(r->gv, gv)) continue;
    any = 1;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", r->resource);
    cJSON_AddBoolToObject(e, "namespaced", r->namespaced);
    cJSON_AddStringToObject(e, "kind", r->kind);
    cJSON_AddItemToArray(arr, e);
    if (r->has_status) {
      char sub[96];
      snprintf(sub, sizeof sub, "%s/status", r->resource);
      e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "name", sub);
      cJSON_AddBoolToObject(e, "namespaced", r->namespaced);
      cJSON_AddStringToObject(e, "kind", r->kind);
      cJSON_AddItemToArray(arr, e);
    }
  }
  char *s = any ? cJSON_PrintUnformatted(d) : NULL;
  cJSON_Delete(d);
  return s;
}

/* ---- store ---- */

static inline fk_obj_t *fk__find(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name) {
  for (fk_obj_t *o = f->objs; o; o = o->next)
    if (!strcmp(o->gv, gv) && !strcmp(o->resource, resource) && !strcmp(o->ns, ns ? ns : "") && !strcmp(o->name, name))
      return o;
  return NULL;
}

static inline void fk__send_chunk(tconn_t *c, const char *s, size_t n) {
  char h[24];
  snprintf(h, sizeof h, "%zx\r\n", n);
  tsrv_puts(c, h);
  tsrv_write(c, s, n);
  tsrv_puts(c, "\r\n");
}

static inline void fk__watchers_prune(fk_t *f) {
  for (fk_watcher_t **pp = &f->watchers; *pp;) {
    fk_watcher_t *w = *pp;
    if (w->c->closing) {
      *pp = w->next;
      tconn_free_cb((uv_handle_t *)&w->c->tcp); /* our reference (see fk__watch) */
      free(w->gv); free(w->resource); free(w->ns); free(w->sel);
      free(w);
      continue;
    }
    pp = &w->next;
  }
}

static inline int fk__watcher_wants(const fk_watcher_t *w, const fk_event_t *e) {
  return !strcmp(w->gv, e->gv) && !strcmp(w->resource, e->resource) && (!w->ns || !strcmp(w->ns, e->ns)) &&
         fk__labels_match(e->obj, w->sel);
}

static inline void fk__send_event(tconn_t *c, const char *type, const cJSON *obj) {
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "type", type);
  cJSON_AddItemToObject(ev, "object", cJSON_Duplicate(obj, 1));
  char *s = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  size_t n = strlen(s);
  s = realloc(s, n + 2);
  s[n] = '\n';
  s[n + 1] = 0;
  fk__send_chunk(c, s, n + 1);
  free(s);
}

static inline void fk__event(fk_t *f, fk_obj_t *o, const char *type) {
  if (f->nev == f->capev) {
    f->capev = f->capev ? f->capev * 2 : 64;
    f->ev = realloc(f->ev, f->capev * sizeof *f->ev);
  }
  fk_event_t *e = &f->ev[f->nev++];
  e->rv = f->rv;
  e->gv = strdup(o->gv);
  e->resource = strdup(o->resource);
  e->ns = strdup(o->ns);
  e->type = strdup(type);
  e->obj = cJSON_Duplicate(o->obj, 1);
  fk__watchers_prune(f);
  for (fk_watcher_t *w = f->watchers; w; w = w->next)
    if (fk__watcher_wants(w, e)) fk__send_event(w->c, type, e->obj);
}

static inline void fk__stamp(fk_t *f, cJSON *obj) {
  char rv[32];
  snprintf(rv, sizeof rv, "%lld", ++f->rv);
  fk__set_str(fk__meta(obj), "resourceVersion", rv);
}

static inline char *fk__spec_text(const cJSON *obj) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  return s ? cJSON_PrintUnformatted(s) : strdup("");
}

/* Replaces o's object with obj (consumed), keeping the system metadata; bumps generation when spec
 * changed; removes the object when it is being deleted and has no finalizer left. */
static inline void fk__replace(fk_t *f, fk_obj_t *o, cJSON *obj) {
  const fk_res_t *r = fk__res(o->gv, o->resource);
  cJSON *om = fk__meta(o->obj), *nm = fk__meta(obj);
  static const char *const sys[] = {"uid", "creationTimestamp", "deletionTimestamp", "generation", "namespace", "name"};
  for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) {
    cJSON_DeleteItemFromObjectCaseSensitive(nm, sys[i]);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(om, sys[i]);
    if (v) cJSON_AddItemToObject(nm, sys[i], cJSON_Duplicate(v, 1));
  }
  if (r && r->has_generation) {
    char *a = fk__spec_text(o->obj), *b = fk__spec_text(obj);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(om, "generation");
    if (strcmp(a, b)) fk__set_num(nm, "generation", (cJSON_IsNumber(g) ? g->valuedouble : 0) + 1);
    free(a);
    free(b);
  }
  fk__stamp(f, obj);
  cJSON_Delete(o->obj);
  o->obj = obj;
  const cJSON *fins = cJSON_GetObjectItemCaseSensitive(nm, "finalizers");
  if (cJSON_GetObjectItemCaseSensitive(nm, "deletionTimestamp") && cJSON_GetArraySize(fins) == 0) {
    fk__event(f, o, "DELETED");
    for (fk_obj_t **pp = &f->objs; *pp; pp = &(*pp)->next)
      if (*pp == o) {
        *pp = o->next;
        break;
      }
    cJSON_Delete(o->obj); free(o->gv); free(o->resource); free(o->ns); free(o->name);
    free(o);
    return;
  }
  fk__event(f, o, "MODIFIED");
}

static inline fk_obj_t *fk__insert(fk_t *f, const char *gv, const char *resource, const char *ns, cJSON *obj) {
  const fk_res_t *r = fk__res(gv, resource);
  cJSON *m = fk__meta(obj);
  const char *name = fk__str(m, "name");
  fk_obj_t *o = calloc(1, sizeof *o);
  o->gv = strdup(gv);
  o->resource = strdup(resource);
  o->ns = strdup(r && r->namespaced && ns ? ns : "");
  o->name = strdup(name ? name : "");
  if (*o->ns) fk__set_str(m, "namespace", o->ns);
  if (!fk__str(m, "uid")) {
    char uid[48];
    snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012d", ++f->uids);
    fk__set_str(m, "uid", uid);
  }
  fk__set_str(m, "creationTimestamp", "2026-01-01T00:00:00Z");
  if (r && r->has_generation) fk__set_num(m, "generation", 1);
  if (r && !cJSON_GetObjectItemCaseSensitive(obj, "kind")) cJSON_AddStringToObject(obj, "kind", r->kind);
  if (r && !cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")) cJSON_AddStringToObject(obj, "apiVersion", r->api_version);
  fk__stamp(f, obj);
  o->obj = obj;
  o->next = f->objs;
  f->objs = o;
  fk__event(f, o, "ADDED");
  return o;
}

/* RFC 7386 JSON merge patch of target (modified in place) with patch. */
static inline void fk__merge_into(cJSON *target, const cJSON *patch) {
  for (const cJSON *p = patch->child; p; p = p->next) {
    cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
    if (cJSON_IsNull(p)) {
      cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
    } else if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
      fk__merge_into(t, p);
    } else if (cJSON_IsObject(p)) {
      cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
      cJSON *n = cJSON_CreateObject();
      fk__merge_into(n, p);
      cJSON_AddItemToObject(target, p->string, n);
    } else {
      cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
      cJSON_AddItemToObject(target, p->string, cJSON_Duplicate(p, 1));
    }
  }
}

/* A Status body. */
static inline char *fk_status_body(int code, const char *reason, const char *message) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "kind", "Status");
  cJSON_AddStringToObject(s, "apiVersion", "v1");
  cJSON_AddObjectToObject(s, "metadata");
  cJSON_AddStringToObject(s, "status", code < 400 ? "Success" : "Failure");
  cJSON_AddStringToObject(s, "message", message ? message : "");
  cJSON_AddStringToObject(s, "reason", reason ? reason : "");
  cJSON_AddNumberToObject(s, "code", code);
  char *t = cJSON_PrintUnformatted(s);
  cJSON_Delete(s);
  return t;
}

/* The outcome of one store operation: an HTTP status and a body (malloc'd). */
typedef struct fk_result_s {
  int status;
  char *body;
} fk_result_t;

static inline fk_result_t fk__err(int code, const char *reason, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return (fk_result_t){code, fk_status_body(code, reason, msg)};
}

static inline fk_result_t fk__ok(int code, const cJSON *obj) { return (fk_result_t){code, cJSON_PrintUnformatted(obj)}; }

static inline fk_result_t fk__create(fk_t *f, const char *gv, const char *resource, const char *ns, cJSON *obj) {
  const char *name = fk__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
  if (!name || !*name) {
    cJSON_Delete(obj);
    return fk__err(422, "Invalid", "metadata.name: Required value");
  }
  if (fk__find(f, gv, resource, ns, name)) {
    fk_result_t r = fk__err(409, "AlreadyExists", "%s \"%s\" already exists", resource, name);
    cJSON_Delete(obj);
    return r;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(fk__meta(obj), "resourceVersion");
  fk_obj_t *o = fk__insert(f, gv, resource, ns, obj);
  return fk__ok(201, o->obj);
}

/* PUT: the whole object (status: only status; else status is kept as it was). */
static inline fk_result_t fk__update(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name,
                                     const char *sub, cJSON *obj) {
  fk_obj_t *o = fk__find(f, gv, resource, ns, name);
  if (!o) {
    cJSON_Delete(obj);
    return fk__err(404, "NotFound", "%s \"%s\" not found", resource, name);
  }
  const char *rv = fk__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
  const char *cur = fk__str(cJSON_GetObjectItemCaseSensitive(o->obj, "metadata"), "resourceVersion");
  if (rv && *rv && strcmp(rv, cur)) {
    cJSON_Delete(obj);
    return fk__err(409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
                   "apply your changes to the latest version and try again", resource, name);
  }
  const fk_res_t *r = fk__res(gv, resource);
  cJSON *next;
  if (sub && !strcmp(sub, "status")) {
    next = cJSON_Duplicate(o->obj, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(next, "status");
    cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
    if (st) cJSON_AddItemToObject(next, "status", st);
    cJSON_Delete(obj);
  } else {
    next = obj;
    if (r && r->has_status) {
      cJSON_DeleteItemFromObjectCaseSensitive(next, "status");
      const cJSON *st = cJSON_GetObjectItemCaseSensitive(o->obj, "status");
      if (st) cJSON_AddItemToObject(next, "status", cJSON_Duplicate(st, 1));
    }
  }
  fk__replace(f, o, next);
  o = fk__find(f, gv, resource, ns, name);
  return o ? fk__ok(200, o->obj) : (fk_result_t){200, fk_status_body(200, "", "deleted")};
}

static inline fk_result_t fk__merge(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name,
                                    const char *sub, const cJSON *patch) {
  fk_obj_t *o = fk__find(f, gv, resource, ns, name);
  if (!o) return fk__err(404, "NotFound", "%s \"%s\" not found", resource, name);
  if (!cJSON_IsObject(patch)) return fk__err(400, "BadRequest", "the patch is not a JSON object");
  const char *rv = fk__str(cJSON_GetObjectItemCaseSensitive(patch, "metadata"), "resourceVersion");
  const char *cur = fk__str(cJSON_GetObjectItemCaseSensitive(o->obj, "metadata"), "resourceVersion");
  if (rv && strcmp(rv, cur))
    return fk__err(409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
                   "apply your changes to the latest version and try again", resource, name);
  const fk_res_t *r = fk__res(gv, resource);
  cJSON *next = cJSON_Duplicate(o->obj, 1);
  cJSON *p = cJSON_Duplicate(patch, 1);
  if (sub && !strcmp(sub, "status")) {
    cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(p, "status");
    cJSON_Delete(p);
    p = cJSON_CreateObject();
    if (st) cJSON_AddItemToObject(p, "status", st);
  } else if (r && r->has_status) {
    cJSON_DeleteItemFromObjectCaseSensitive(p, "status");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"), "resourceVersion");
  fk__merge_into(next, p);
  cJSON_Delete(p);
  fk__replace(f, o, next);
  o = fk__find(f, gv, resource, ns, name);
  return o ? fk__ok(200, o->obj) : (fk_result_t){200, fk_status_body(200, "", "deleted")};
}

/* Server-side apply, just enough: the applied object replaces what was there (status kept). */
static inline fk_result_t fk__apply(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name,
                                    cJSON *obj) {
  const char *n = fk__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
  if (!n || strcmp(n, name)) {
    cJSON_Delete(obj);
    return fk__err(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)",
                   n ? n : "", name);
  }
  fk_obj_t *o = fk__find(f, gv, resource, ns, name);
  if (!o) {
    cJSON_DeleteItemFromObjectCaseSensitive(fk__meta(obj), "resourceVersion");
    o = fk__insert(f, gv, resource, ns, obj);
    return fk__ok(201, o->obj);
  }
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(o->obj, "status");
  if (st && !cJSON_GetObjectItemCaseSensitive(obj, "status")) cJSON_AddItemToObject(obj, "status", cJSON_Duplicate(st, 1));
  fk__replace(f, o, obj);
  o = fk__find(f, gv, resource, ns, name);
  return o ? fk__ok(200, o->obj) : (fk_result_t){200, fk_status_body(200, "", "deleted")};
}

static inline fk_result_t fk__delete(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name,
                                     const cJSON *opts) {
  fk_obj_t *o = fk__find(f, gv, resource, ns, name);
  if (!o) return fk__err(404, "NotFound", "%s \"%s\" not found", resource, name);
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(opts, "preconditions");
  const char *puid = fk__str(pre, "uid"), *prv = fk__str(pre, "resourceVersion");
  cJSON *m = fk__meta(o->obj);
  if ((puid && strcmp(puid, fk__str(m, "uid"))) || (prv && strcmp(prv, fk__str(m, "resourceVersion"))))
    return fk__err(409, "Conflict", "Precondition failed: UID or resourceVersion of %s \"%s\" does not match", resource,
                   name);
  const cJSON *fins = cJSON_GetObjectItemCaseSensitive(m, "finalizers");
  if (cJSON_GetArraySize(fins) > 0) {
    if (!cJSON_GetObjectItemCaseSensitive(m, "deletionTimestamp")) {
      cJSON *next = cJSON_Duplicate(o->obj, 1);
      cJSON *nm = fk__meta(next);
      fk__set_str(nm, "deletionTimestamp", "2026-01-01T00:00:01Z");
      fk__set_num(nm, "deletionGracePeriodSeconds", 0);
      /* fk__replace keeps the old system fields: set it on the stored object first */
      fk__set_str(m, "deletionTimestamp", "2026-01-01T00:00:01Z");
      fk__replace(f, o, next);
    }
    o = fk__find(f, gv, resource, ns, name);
    return fk__ok(200, o->obj);
  }
  fk__stamp(f, o->obj);
  fk__event(f, o, "DELETED");
  fk_result_t r = fk__ok(200, o->obj);
  for (fk_obj_t **pp = &f->objs; *pp; pp = &(*pp)->next)
    if (*pp == o) {
      *pp = o->next;
      break;
    }
  cJSON_Delete(o->obj); free(o->gv); free(o->resource); free(o->ns); free(o->name);
  free(o);
  return r;
}

static inline char *fk__list(fk_t *f, const fk_res_t *r, const char *ns, const char *sel) {
  cJSON *l = cJSON_CreateObject();
  cJSON_AddStringToObject(l, "kind", r->list_kind);
  cJSON_AddStringToObject(l, "apiVersion", r->api_version);
  cJSON *m = cJSON_AddObjectToObject(l, "metadata");
  char rv[32];
  snprintf(rv, sizeof rv, "%lld", f->rv);
  cJSON_AddStringToObject(m, "resourceVersion", rv);
  cJSON *items = cJSON_AddArrayToObject(l, "items");
  for (fk_obj_t *o = f->objs; o; o = o->next)
    if (!strcmp(o->gv, r->gv) && !strcmp(o->resource, r->resource) && (!ns || !strcmp(o->ns, ns)) &&
        fk__labels_match(o->obj, sel))
      cJSON_AddItemToArray(items, cJSON_Duplicate(o->obj, 1));
  char *s = cJSON_PrintUnformatted(l);
  cJSON_Delete(l);
  return s;
}

/* ---- HTTP ---- */

static inline void fk__reply(tconn_t *c, int status, const char *body, uint64_t delay_ms) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", status,
             status < 300 ? "OK" : "Error", strlen(body), body);
  if (delay_ms) tsrv_later(c, delay_ms, b.data, b.len);
  else tsrv_write(c, b.data, b.len);
  buf_free(&b);
}

static inline const char *fk__header(const char *headers, const char *name, char *out, size_t n) {
  size_t nl = strlen(name);
  for (const char *p = headers; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > nl + 1 && !strncasecmp(p, name, nl) && p[nl] == ':') {
      const char *v = p + nl + 1;
      while (*v == ' ') v++;
      snprintf(out, n, "%.*s", (int)(len - (size_t)(v - p)), v);
      return out;
    }
    p = eol ? eol + 1 : NULL;
  }
  return NULL;
}

static inline void fk__watch(fk_t *f, tconn_t *c, const fk_res_t *r, const char *ns, const char *query) {
  char rvs[32] = "", sel[512] = "";
  fk_query(query, "resourceVersion", rvs, sizeof rvs);
  int has_sel = fk_query(query, "labelSelector", sel, sizeof sel) != NULL;
  tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  fk_watcher_t *w = calloc(1, sizeof *w);
  w->c = c;
  c->refs++; /* kept until fk__watchers_prune sees it closed */
  w->gv = strdup(r->gv);
  w->resource = strdup(r->resource);
  w->ns = fk__dup(ns);
  w->sel = has_sel ? strdup(sel) : NULL;
  long long from = atoll(rvs);
  if (!*rvs || from == 0) {
    for (fk_obj_t *o = f->objs; o; o = o->next) {
      fk_event_t e = {.gv = o->gv, .resource = o->resource, .ns = o->ns, .obj = o->obj};
      if (fk__watcher_wants(w, &e)) fk__send_event(c, "ADDED", o->obj);
    }
  } else {
    for (size_t i = 0; i < f->nev; i++)
      if (f->ev[i].rv > from && fk__watcher_wants(w, &f->ev[i])) fk__send_event(c, f->ev[i].type, f->ev[i].obj);
  }
  w->next = f->watchers;
  f->watchers = w;
}

static inline int fk__rule_matches(const fk_rule_t *r, const char *method, const char *path, const char *body) {
  if (!r->times) return 0;
  if (r->method[0] && strcmp(r->method, method)) return 0;
  size_t pl = strlen(r->path);
  if (pl && r->path[pl - 1] == '*') {
    if (strncmp(r->path, path, pl - 1)) return 0;
  } else if (pl && strcmp(r->path, path)) {
    return 0;
  }
  if (r->body_has[0] && (!body || !strstr(body, r->body_has))) return 0;
  return 1;
}

static inline void fk__handle(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                              size_t body_len) {
  fk_t *f = fk__self;
  const char *q = strchr(url, '?');
  char *path = q ? fk__ndup(url, (size_t)(q - url)) : strdup(url);
  const char *query = q ? q + 1 : "";
  char tmp[64];
  int watch = fk_query(query, "watch", tmp, sizeof tmp) && (!strcmp(tmp, "1") || !strcmp(tmp, "true"));
  const char *m = watch ? "WATCH" : method;
  if (f->nlog == f->caplog) {
    f->caplog = f->caplog ? f->caplog * 2 : 256;
    f->log = realloc(f->log, f->caplog * sizeof *f->log);
  }
  f->log[f->nlog++] = (fk_req_t){strdup(m), strdup(path), strdup(query), fk__ndup(body, body_len), uv_now(f->loop)};

  uint64_t delay = 0;
  int hang_after = 0;
  for (fk_rule_t *r = f->rules; r; r = r->next) {
    if (!fk__rule_matches(r, m, path, body)) continue;
    if (r->skip > 0) {
      r->skip--;
      break;
    }
    if (r->times > 0) r->times--;
    r->hits++;
    if (r->act == FK_ERROR) {
      char *b = fk_status_body(r->status, r->reason, r->message);
      fk__reply(c, r->status, b, 0);
      free(b);
      free(path);
      return;
    }
    if (r->act == FK_DROP) {
      f->dropped++;
      tsrv_close(c);
      free(path);
      return;
    }
    if (r->act == FK_HANG) {
      f->held++;
      free(path);
      return;
    }
    if (r->act == FK_HANG_AFTER) hang_after = 1;
    if (r->act == FK_DELAY) delay = r->delay_ms;
    break;
  }

  fk_result_t res = {0, NULL};
  char *doc = NULL;
  if (!strcmp(path, "/version")) {
    char v[128];
    snprintf(v, sizeof v, "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"%s\"}",
             f->git_version ? f->git_version : "v1.34.1");
    res = (fk_result_t){200, strdup(v)};
  } else if (!strcmp(path, "/api")) {
    res = (fk_result_t){200, strdup("{\"kind\":\"APIVersions\",\"versions\":[\"v1\"]}")};
  } else if (!strcmp(path, "/apis")) {
    res = (fk_result_t){200, strdup("{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":["
                                    "{\"name\":\"apps\",\"versions\":[{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}],"
                                    "\"preferredVersion\":{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}},"
                                    "{\"name\":\"rudder.dev\",\"versions\":[{\"groupVersion\":\"rudder.dev/v1alpha1\","
                                    "\"version\":\"v1alpha1\"}],\"preferredVersion\":{\"groupVersion\":"
                                    "\"rudder.dev/v1alpha1\",\"version\":\"v1alpha1\"}},"
                                    "{\"name\":\"apiextensions.k8s.io\",\"versions\":[{\"groupVersion\":"
                                    "\"apiextensions.k8s.io/v1\",\"version\":\"v1\"}],\"preferredVersion\":"
                                    "{\"groupVersion\":\"apiextensions.k8s.io/v1\",\"version\":\"v1\"}}]}")};
  } else if ((doc = fk__discovery_doc(path))) {
    res = (fk_result_t){200, doc};
  } else {
    /* /api/v1/... or /apis/G/V/...: [namespaces/NS/]RESOURCE[/NAME[/SUB]] */
    char gv[128] = "";
    const char *rest = NULL;
    if (!strncmp(path, "/api/v1/", 8)) {
      snprintf(gv, sizeof gv, "/api/v1");
      rest = path + 8;
    } else if (!strncmp(path, "/apis/", 6)) {
      const char *s1 = strchr(path + 6, '/');
      const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
      if (s2) {
        snprintf(gv, sizeof gv, "%.*s", (int)(s2 - path), path);
        rest = s2 + 1;
      }
    }
    char *seg[6] = {0};
    int nseg = 0;
    char *copy = rest ? strdup(rest) : NULL, *save = NULL;
    for (char *t = copy ? strtok_r(copy, "/", &save) : NULL; t && nseg < 6; t = strtok_r(NULL, "/", &save)) {
      fk__urldecode(t);
      seg[nseg++] = t;
    }
    const char *ns = NULL, *resource = NULL, *name = NULL, *sub = NULL;
    if (nseg >= 3 && !strcmp(seg[0], "namespaces")) {
      ns = seg[1]; resource = seg[2]; name = seg[3]; sub = nseg > 4 ? seg[4] : NULL;
    } else if (nseg >= 1) {
      resource = seg[0]; name = nseg > 1 ? seg[1] : NULL; sub = nseg > 2 ? seg[2] : NULL;
    }
    const fk_res_t *r = resource ? fk__res(gv, resource) : NULL;
    char ctype[128] = "";
    fk__header(headers, "Content-Type", ctype, sizeof ctype);
    cJSON *in = body_len ? cJSON_ParseWithLength(body, body_len) : NULL;
    if (!r) {
      res = fk__err(404, "NotFound", "the server could not find the requested resource");
    } else if (body_len && !in) {
      res = fk__err(400, "BadRequest", "the body is not JSON");
    } else if (!strcmp(method, "GET") && !name) {
      if (watch) {
        fk__watch(f, c, r, ns, query);
        cJSON_Delete(in);
        free(copy);
        free(path);
        return;
      }
      char sel[512];
      res = (fk_result_t){200, fk__list(f, r, ns, fk_query(query, "labelSelector", sel, sizeof sel))};
    } else if (!strcmp(method, "GET")) {
      fk_obj_t *o = fk__find(f, gv, resource, ns, name);
      res = o ? fk__ok(200, o->obj) : fk__err(404, "NotFound", "%s \"%s\" not found", resource, name);
    } else if (!strcmp(method, "POST") && !name) {
      res = in ? fk__create(f, gv, resource, ns, in) : fk__err(400, "BadRequest", "no body");
      in = NULL;
    } else if (!strcmp(method, "PUT") && name) {
      res = in ? fk__update(f, gv, resource, ns, name, sub, in) : fk__err(400, "BadRequest", "no body");
      in = NULL;
    } else if (!strcmp(method, "PATCH") && name && strstr(ctype, "apply-patch")) {
      res = in ? fk__apply(f, gv, resource, ns, name, in) : fk__err(400, "BadRequest", "no body");
      in = NULL;
    } else if (!strcmp(method, "PATCH") && name && strstr(ctype, "merge-patch")) {
      res = fk__merge(f, gv, resource, ns, name, sub, in);
    } else if (!strcmp(method, "PATCH")) {
      res = fk__err(415, "UnsupportedMediaType", "the fake server does not take %s", ctype);
    } else if (!strcmp(method, "DELETE") && name) {
      res = fk__delete(f, gv, resource, ns, name, in);
    } else {
      res = fk__err(405, "MethodNotAllowed", "%s is not supported on %s", method, path);
    }
    cJSON_Delete(in);
    free(copy);
  }
  if (hang_after) {
    f->held++;
  } else {
    fk__reply(c, res.status, res.body, delay);
  }
  free(res.body);
  free(path);
}

/* ---- the test's side ---- */

/* Starts the fake on loop (127.0.0.1, a free port); f->url is its base URL. 0 or a libuv error. */
static inline int fk_start(fk_t *f, uv_loop_t *loop) {
  memset(f, 0, sizeof *f);
  f->loop = loop;
  fk__self = f;
  int r = tsrv_start(&f->srv, loop, fk__handle);
  snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d", f->srv.port);
  return r;
}

/* Removes every injection rule. */
static inline void fk_clear_rules(fk_t *f) {
  while (f->rules) {
    fk_rule_t *n = f->rules->next;
    free(f->rules);
    f->rules = n;
  }
}

/* Adds a rule (last in order) and returns it for further settings (skip, body_has, status...). */
static inline fk_rule_t *fk_inject(fk_t *f, const char *method, const char *path, fk_act_t act, int times) {
  fk_rule_t *r = calloc(1, sizeof *r);
  snprintf(r->method, sizeof r->method, "%s", method ? method : "");
  snprintf(r->path, sizeof r->path, "%s", path ? path : "");
  r->act = act;
  r->times = times;
  r->status = 500;
  snprintf(r->reason, sizeof r->reason, "InternalError");
  snprintf(r->message, sizeof r->message, "injected failure");
  fk_rule_t **pp = &f->rules;
  while (*pp) pp = &(*pp)->next;
  *pp = r;
  return r;
}

/* An error rule: answers status with a Status of reason and message. */
static inline fk_rule_t *fk_inject_error(fk_t *f, const char *method, const char *path, int times, int status,
                                         const char *reason, const char *message) {
  fk_rule_t *r = fk_inject(f, method, path, FK_ERROR, times);
  r->status = status;
  snprintf(r->reason, sizeof r->reason, "%s", reason);
  snprintf(r->message, sizeof r->message, "%s", message);
  return r;
}

/* The next matching request (once) is answered after ms. */
static inline fk_rule_t *fk_inject_delay(fk_t *f, const char *method, const char *path, uint64_t ms) {
  fk_rule_t *r = fk_inject(f, method, path, FK_DELAY, 1);
  r->delay_ms = ms;
  return r;
}

/* Requests logged since entry `from` (fk_mark) with this method ("" any) and path (exact, or prefix
 * with a trailing '*'; "" any). */
static inline int fk_count_from(const fk_t *f, size_t from, const char *method, const char *path) {
  int n = 0;
  size_t pl = strlen(path);
  for (size_t i = from; i < f->nlog; i++) {
    const fk_req_t *q = &f->log[i];
    if (*method && strcmp(q->method, method)) continue;
    if (pl && path[pl - 1] == '*' ? strncmp(q->path, path, pl - 1) : pl && strcmp(q->path, path)) continue;
    n++;
  }
  return n;
}

static inline int fk_count(const fk_t *f, const char *method, const char *path) { return fk_count_from(f, 0, method, path); }

/* Requests since from (method and path as fk_count) whose body contains substr. */
static inline int fk_body_seen_from(const fk_t *f, size_t from, const char *method, const char *path, const char *substr) {
  int n = 0;
  size_t pl = strlen(path);
  for (size_t i = from; i < f->nlog; i++) {
    const fk_req_t *q = &f->log[i];
    if (*method && strcmp(q->method, method)) continue;
    if (pl && path[pl - 1] == '*' ? strncmp(q->path, path, pl - 1) : pl && strcmp(q->path, path)) continue;
    n += q->body && strstr(q->body, substr) != NULL;
  }
  return n;
}

static inline int fk_body_seen(const fk_t *f, const char *method, const char *path, const char *substr) {
  return fk_body_seen_from(f, 0, method, path, substr);
}

/* A position in the request log. */
static inline size_t fk_mark(const fk_t *f) { return f->nlog; }

/* Requests since from that are not watches (WATCH). */
static inline int fk_count_nonwatch_from(const fk_t *f, size_t from) {
  int n = 0;
  for (size_t i = from; i < f->nlog; i++) n += strcmp(f->log[i].method, "WATCH") != 0;
  return n;
}

/* Prints the log from `from` (for diagnosing a failed test). */
static inline void fk_dump(const fk_t *f, size_t from) {
  for (size_t i = from; i < f->nlog; i++)
    fprintf(stderr, "  [%zu] %s %s%s%s\n", i, f->log[i].method, f->log[i].path, *f->log[i].query ? "?" : "",
            f->log[i].query);
}

/* The stored object (borrowed, valid until the next change), or NULL. */
static inline cJSON *fk_get(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name) {
  fk_obj_t *o = fk__find(f, gv, resource, ns, name);
  return o ? o->obj : NULL;
}

/* Creates or replaces an object (json text) as another writer would; watchers hear of it. Returns the
 * HTTP status the API would answer. */
static inline int fk_put(fk_t *f, const char *gv, const char *resource, const char *ns, const char *json) {
  cJSON *obj = cJSON_Parse(json);
  if (!obj) return 400;
  char *name = fk__dup(fk__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name")); /* obj is consumed */
  fk_result_t r = name && fk__find(f, gv, resource, ns, name) ? fk__update(f, gv, resource, ns, name, NULL, obj)
                                                             : fk__create(f, gv, resource, ns, obj);
  free(name);
  free(r.body);
  return r.status;
}

/* Merge-patches an object (sub "status" for the status subresource). */
static inline int fk_merge(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name,
                           const char *sub, const char *patch_json) {
  cJSON *p = cJSON_Parse(patch_json);
  fk_result_t r = fk__merge(f, gv, resource, ns, name, sub, p);
  cJSON_Delete(p);
  free(r.body);
  return r.status;
}

/* Deletes an object as the API does (finalizers hold it with a deletionTimestamp). */
static inline int fk_delete(fk_t *f, const char *gv, const char *resource, const char *ns, const char *name) {
  fk_result_t r = fk__delete(f, gv, resource, ns, name, NULL);
  free(r.body);
  return r.status;
}

/* Objects of a resource (in ns, or all when NULL) matching a label selector ("" all). */
static inline int fk_count_objects(fk_t *f, const char *gv, const char *resource, const char *ns, const char *sel) {
  int n = 0;
  for (fk_obj_t *o = f->objs; o; o = o->next)
    if (!strcmp(o->gv, gv) && !strcmp(o->resource, resource) && (!ns || !strcmp(o->ns, ns)) && fk__labels_match(o->obj, sel))
      n++;
  return n;
}

/* Empties the store (objects and event log) without telling watchers, and the request log. */
static inline void fk_reset(fk_t *f) {
  while (f->objs) {
    fk_obj_t *o = f->objs;
    f->objs = o->next;
    cJSON_Delete(o->obj); free(o->gv); free(o->resource); free(o->ns); free(o->name);
    free(o);
  }
  for (size_t i = 0; i < f->nev; i++) {
    free(f->ev[i].gv); free(f->ev[i].resource); free(f->ev[i].ns); free(f->ev[i].type);
    cJSON_Delete(f->ev[i].obj);
  }
  f->nev = 0;
  for (size_t i = 0; i < f->nlog; i++) {
    free(f->log[i].method); free(f->log[i].path); free(f->log[i].query); free(f->log[i].body);
  }
  f->nlog = 0;
  fk_clear_rules(f);
  f->held = f->dropped = 0;
}

/* Closes every connection and the listener and frees everything (run the loop after it). */
static inline void fk_stop(fk_t *f) {
  tsrv_stop(&f->srv);
  fk__watchers_prune(f);
  fk_reset(f);
  free(f->ev);
  free(f->log);
  f->ev = NULL;
  f->log = NULL;
  f->capev = f->caplog = 0;
  fk__self = NULL;
}
