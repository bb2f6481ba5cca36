/* rudder diff: what an upgrade of a HelmRelease would change. The chart is rendered with the
 * release's values by the engine's pipeline (helm/render: render_release, the same options the
 * engine gives it), each object is made as the engine applies it (Helm's ownership metadata and
 * rudder's release labels) and dry-run applied with the engine's field manager, and the API
 * server's answer (what the object would become) is compared with the live object as a unified
 * diff of their YAML (managedFields left out). Objects of the deployed revision that the new one
 * drops are shown as deleted. */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include "helm/action/record.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "reconcile/doors/doors.h"
#include "reconcile/drift.h"
#include "reconcile/request.h"
#include "watch/discovery.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cmd_diff__usage[] =
  "Usage: rudder diff NAME [-n NS] [--kubeconfig FILE] [--context NAME]\n"
  "  What an upgrade of the HelmRelease to its spec would change in the cluster: each object the chart\n"
  "  renders (as the controller renders and applies it) against the live one, as a unified diff;\n"
  "  objects the upgrade would delete too. Nothing is changed (server-side dry runs). Exit 0: no\n"
  "  difference, 1: differences, 2: an error. Charts carried inline (spec.chart.inline) only, without\n"
  "  valuesFrom; hooks, crds/ and `lookup` (empty, as helm template) are left out.\n";

#define DIFF_FIELD_MANAGER "rudder" /* the engine's (engine_opts_t.field_manager's default) */
#define DIFF_MAX_CELLS (16u << 20)  /* lines(a) x lines(b) the line matcher may use */

/* ---- YAML for people: both sides are printed by the same emitter, so only changes differ ---- */

static int yaml__plain(const char *s) {
  if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0])) return 0;
  static const char *const words[] = {"true", "false", "null", "yes", "no", "on", "off", "~", "True", "False",
                                      "Null", "TRUE", "FALSE", "NULL", "Yes", "No", "On", "Off", NULL};
  for (size_t i = 0; words[i]; i++)
    if (!strcmp(s, words[i])) return 0;
  char *end;
  (void)strtod(s, &end);
  if (!*end) return 0; /* would read back as a number */
  size_t n = strlen(s);
  if (s[n - 1] == ' ' || s[n - 1] == ':') return 0;
  for (const char *p = s; *p; p++) {
    if ((unsigned char)*p < 0x20 || *p == '"') return 0;
    if ((p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#')) return 0;
  }
  return 1;
}

static void yaml__str(buf_t *out, const char *s) {
  if (yaml__plain(s)) {
    buf_puts(out, s);
    return;
  }
  cJSON *j = cJSON_CreateString(s);
  char *q = j ? cJSON_PrintUnformatted(j) : NULL;
  buf_puts(out, q ? q : "\"\"");
  free(q);
  cJSON_Delete(j);
}

static void yaml__pad(buf_t *out, int n) {
  for (int i = 0; i < n; i++) buf_putc(out, ' ');
}

static int yaml__cmp(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void yaml__value(buf_t *out, const cJSON *v, int indent);

/* A scalar (or an empty collection) after "key: " or "- ". */
static int yaml__scalar(buf_t *out, const cJSON *v, int indent) {
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring, *nl = strchr(s, '\n');
    if (nl && s[0] != ' ' && !strstr(s, "\n ") && !strchr(s, '\r')) { /* a literal block, as kubectl shows it */
      size_t n = strlen(s);
      buf_puts(out, n && s[n - 1] == '\n' ? "|" : "|-");
      for (const char *p = s; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        buf_putc(out, '\n');
        if (len) yaml__pad(out, indent + 2);
        buf_append(out, p, len);
        p += len + (e ? 1 : 0);
        if (!e) break;
      }
      return 1;
    }
    yaml__str(out, s);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == (double)(long long)d && d > -9e15 && d < 9e15) buf_printf(out, "%lld", (long long)d);
    else buf_printf(out, "%.17g", d);
  } else if (cJSON_IsRaw(v)) {
    buf_puts(out, v->valuestring);
  } else if (cJSON_IsBool(v)) {
    buf_puts(out, cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsNull(v)) {
    buf_puts(out, "null");
  } else if (cJSON_IsObject(v) && !v->child) {
    buf_puts(out, "{}");
  } else if (cJSON_IsArray(v) && !v->child) {
    buf_puts(out, "[]");
  } else {
    return 0;
  }
  return 1;
}

static void yaml__object(buf_t *out, const cJSON *o, int indent, int first_inline) {
  size_t n = (size_t)cJSON_GetArraySize(o), k = 0;
  const cJSON **keys = n ? malloc(n * sizeof *keys) : NULL;
  if (!keys) return;
  for (const cJSON *c = o->child; c; c = c->next) keys[k++] = c;
  qsort(keys, n, sizeof *keys, yaml__cmp); /* as sigs.k8s.io/yaml prints them */
  for (size_t i = 0; i < n; i++) {
    if (i || !first_inline) yaml__pad(out, indent);
    yaml__str(out, keys[i]->string);
    buf_putc(out, ':');
    size_t at = out->len;
    buf_putc(out, ' ');
    if (yaml__scalar(out, keys[i], indent)) {
      buf_putc(out, '\n');
      continue;
    }
    out->len = at; /* no space before a nested block */
    out->data[at] = 0;
    buf_putc(out, '\n');
    yaml__value(out, keys[i], cJSON_IsArray(keys[i]) ? indent : indent + 2);
  }
  free(keys);
}

static void yaml__value(buf_t *out, const cJSON *v, int indent) {
  if (cJSON_IsObject(v)) {
    yaml__object(out, v, indent, 0);
    return;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, v) {
    yaml__pad(out, indent);
    buf_puts(out, "- ");
    if (yaml__scalar(out, it, indent + 2)) buf_putc(out, '\n');
    else if (cJSON_IsObject(it)) yaml__object(out, it, indent + 2, 1);
    else { /* a list in a list */
      buf_putc(out, '\n');
      yaml__value(out, it, indent + 2);
    }
  }
}

/* ---- unified diff of two texts, by lines ---- */

typedef struct diff_lines_s {
  const char **p;
  size_t *len;
  size_t n;
} diff_lines_t;

static int diff__split(const char *s, diff_lines_t *l) {
  size_t n = 0;
  for (const char *p = s; *p; p++)
    if (*p == '\n') n++;
  if (*s && s[strlen(s) - 1] != '\n') n++;
  l->n = 0;
  l->p = calloc(n + 1, sizeof *l->p);
  l->len = calloc(n + 1, sizeof *l->len);
  if (!l->p || !l->len) return -1;
  for (const char *p = s; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    l->p[l->n] = p;
    l->len[l->n++] = len;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

static int diff__eq(const diff_lines_t *a, size_t i, const diff_lines_t *b, size_t j) {
  return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], a->len[i]);
}

/* Appends to out `diff -u`'s hunks (3 lines of context) turning a into b, under the two headers;
 * nothing when they are equal. Lines are matched by a longest common subsequence; past
 * DIFF_MAX_CELLS the whole text is shown replaced. 0 or -1 (out of memory). */
static int diff_unified(const char *a, const char *b, const char *from, const char *to, buf_t *out) {
  if (!strcmp(a, b)) return 0;
  diff_lines_t la = {0}, lb = {0};
  int rc = -1;
  unsigned *lcs = NULL;
  char *ops = NULL; /* ' ', '-', '+' per step of the edit script */
  size_t *ia = NULL, *ib = NULL, nops = 0;
  if (diff__split(a, &la) || diff__split(b, &lb)) goto done;
  size_t n = la.n, m = lb.n;
  int whole = (n + 1) * (m + 1) > DIFF_MAX_CELLS;
  if (!whole && !(lcs = calloc((n + 1) * (m + 1), sizeof *lcs))) goto done;
  for (size_t i = n; !whole && i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i * (m + 1) + j] = diff__eq(&la, i, &lb, j) ? lcs[(i + 1) * (m + 1) + j + 1] + 1
                             : lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1] ? lcs[(i + 1) * (m + 1) + j]
                                                                                      : lcs[i * (m + 1) + j + 1];
  ops = malloc(n + m + 1);
  ia = malloc((n + m + 1) * sizeof *ia);
  ib = malloc((n + m + 1) * sizeof *ib);
  if (!ops || !ia || !ib) goto done;
  for (size_t i = 0, j = 0; i < n || j < m;) {
    char op;
    if (i < n && j < m && !whole && diff__eq(&la, i, &lb, j)) op = ' ';
    else if (i < n && (j == m || whole || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) op = '-';
    else op = '+';
    ops[nops] = op;
    ia[nops] = i;
    ib[nops] = j;
    nops++;
    if (op != '+') i++;
    if (op != '-') j++;
  }
  buf_printf(out, "--- %s\n+++ %s\n", from, to);
  for (size_t k = 0; k < nops;) {
    if (ops[k] == ' ') {
      k++;
      continue;
    }
    /* A hunk: from 3 lines before this change to 3 after the last change closer than 7 lines. */
    size_t start = k >= 3 ? k - 3 : 0, end = k;
    for (size_t q = k; q < nops; q++)
      if (ops[q] != ' ') end = q;
      else if (q - end > 6) break;
    end = end + 4 < nops ? end + 4 : nops;
    while (start < k && ops[start] != ' ') start++;
    size_t ca = 0, cb = 0;
    for (size_t q = start; q < end; q++) {
      if (ops[q] != '+') ca++;
      if (ops[q] != '-') cb++;
    }
    size_t sa = ia[start] + (ca ? 1 : 0), sb = ib[start] + (cb ? 1 : 0);
    buf_printf(out, "@@ -%zu", sa);
    if (ca != 1) buf_printf(out, ",%zu", ca);
    buf_printf(out, " +%zu", sb);
    if (cb != 1) buf_printf(out, ",%zu", cb);
    buf_puts(out, " @@\n");
    for (size_t q = start; q < end; q++) {
      buf_putc(out, ops[q]);
      if (ops[q] == '+') buf_append(out, lb.p[ib[q]], lb.len[ib[q]]);
      else buf_append(out, la.p[ia[q]], la.len[ia[q]]);
      buf_putc(out, '\n');
    }
    k = end;
  }
  rc = 0;
done:
  free(la.p), free(la.len), free(lb.p), free(lb.len), free(lcs), free(ops), free(ia), free(ib);
  return rc;
}

/* ---- the command ---- */

typedef struct diff_s {
  cmd_t c;
  discovery_t *disc;
  release_req_t req;
  record_t *recs;
  size_t nrecs;
  buf_t out;
  int differs, errors;
} diff_t;

typedef struct diff_map_s {
  int done, err;
  char *msg;
  discovery_mapping_t m;
  char *group, *version, *resource;
} diff_map_t;

static void diff__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  diff_map_t *w = data;
  w->done = 1;
  w->err = err;
  if (err) {
    w->msg = strdup(errmsg ? errmsg : uv_strerror(err));
    return;
  }
  w->m = *m;
  w->group = strdup(m->group);
  w->version = strdup(m->version);
  w->resource = strdup(m->resource);
  if (!w->group || !w->version || !w->resource) w->err = UV_ENOMEM;
}

static void diff__map_free(diff_map_t *w) { free(w->msg), free(w->group), free(w->version), free(w->resource); }

/* The object's YAML without what only the server keeps track of (managedFields). */
static char *diff__yaml(cJSON *obj) {
  if (!obj) return strdup("");
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
  buf_t y = BUF_INIT;
  yaml__value(&y, obj, 0);
  return y.data ? buf_steal(&y) : strdup("");
}

/* Compares one object: live (GET) against what the apply would make of it (dry run); want NULL:
 * the upgrade deletes it. */
static void diff__object(diff_t *d, const char *api_version, const char *kind, const char *ns_doc, const char *name,
                         cJSON *want) {
  cmd_t *c = &d->c;
  diff_map_t w = {0};
  if (discovery_resolve(d->disc, api_version, kind, diff__mapped, &w)) w.done = 1, w.err = UV_ENOMEM;
  while (!w.done && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  if (w.err) {
    fprintf(stderr, "rudder diff: %s %s: %s\n", kind, name, w.msg ? w.msg : uv_strerror(w.err));
    d->errors++;
    diff__map_free(&w);
    return;
  }
  const char *ns = w.m.namespaced ? (ns_doc && *ns_doc ? ns_doc : d->req.target_ns) : NULL;
  if (want && ns) {
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(want, "metadata");
    if (meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace")) cJSON_AddStringToObject(meta, "namespace", ns);
  }
  buf_t path = BUF_INIT, title = BUF_INIT;
  kube_path(&path, w.group, w.version, w.resource, ns, name, NULL);
  buf_printf(&title, "%s %s%s%s", kind, ns ? ns : "", ns ? "/" : "", name);
  cmd_resp_t live, after = {0};
  cmd_do(c, &(kube_req_opts_t){.path = path.data}, &live);
  cJSON *lo = NULL, *ao = NULL;
  if (live.err || (live.status != 200 && live.status != 404)) {
    cmd_fail(c, &live, title.data);
    d->errors++;
    goto out;
  }
  if (live.status == 200) lo = cJSON_ParseWithLength(live.body, live.len);
  if (want) {
    char *body = cJSON_PrintUnformatted(want);
    buf_t ap = BUF_INIT;
    buf_puts(&ap, path.data);
    kube_query_add(&ap, "fieldManager", DIFF_FIELD_MANAGER);
    kube_query_add(&ap, "force", "true");
    kube_query_add(&ap, "dryRun", "All");
    if (body && ap.data)
      cmd_do(c, &(kube_req_opts_t){.method = "PATCH", .path = ap.data, .content_type = "application/apply-patch+yaml",
                                   .body = body, .body_len = strlen(body), .retry = KUBE_RETRY_NEVER},
             &after);
    else
      after.err = UV_ENOMEM;
    free(body);
    buf_free(&ap);
    if (after.err || after.status >= 300) {
      cmd_fail(c, &after, title.data);
      d->errors++;
      goto out;
    }
    ao = cJSON_ParseWithLength(after.body, after.len);
  } else if (!lo) {
    goto out; /* to be deleted, and already gone */
  }
  char *ya = diff__yaml(lo), *yb = diff__yaml(ao);
  buf_t from = BUF_INIT, to = BUF_INIT;
  buf_printf(&from, "%s (live)", title.data);
  buf_printf(&to, "%s (%s)", title.data, !ao ? "deleted by the upgrade" : lo ? "after the upgrade" : "created by the upgrade");
  size_t before = d->out.len;
  if (!ya || !yb || !from.data || !to.data || diff_unified(ya, yb, from.data, to.data, &d->out)) d->errors++;
  if (d->out.len > before) d->differs = 1;
  free(ya), free(yb);
  buf_free(&from), buf_free(&to);
out:
  cJSON_Delete(lo), cJSON_Delete(ao);
  cmd_resp_free(&live), cmd_resp_free(&after);
  buf_free(&path), buf_free(&title);
  diff__map_free(&w);
}

static void diff__version(int err, const char *errmsg, const discovery_version_t *v, void *data) {
  char **out = data;
  (void)errmsg;
  *out = !err && v && v->git_version ? strdup(v->git_version) : strdup("");
}

static void diff__closed(void *data) { *(int *)data = 1; }

/* Renders and compares; 0 (no difference), 1 (differences) or 2 (an error, said). */
static int diff__run(diff_t *d) {
  cmd_t *c = &d->c;
  cJSON *obj = NULL;
  if (cmd_get_release(c, &obj)) return 2;
  buf_t err = BUF_INIT;
  door_ctx_t ctx = {.chartrepo_namespace = "captain-system", .allow_cross_namespace_refs = true};
  int prc = door_helmrelease.parse(obj, &ctx, &d->req, &err);
  cJSON_Delete(obj);
  if (prc) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: %s\n", c->ns, c->arg, err.data ? err.data : "out of memory");
    buf_free(&err);
    return 2;
  }
  static const char *const srcs[] = {"inline", "repository", "url", "url (oci://)", "configMapRef", "secretRef"};
  if (d->req.src.kind != REQ_SRC_INLINE) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: only charts carried inline (spec.chart.inline) can be diffed "
            "yet; this one's comes from spec.chart.%s\n", c->ns, c->arg, srcs[d->req.src.kind]);
    return 2;
  }
  if (d->req.nvalues_from) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: spec.valuesFrom is not read by rudder diff yet\n", c->ns, c->arg);
    return 2;
  }
  if (cmd_list_records(c, d->req.storage_ns, d->req.release_name, &d->recs, &d->nrecs)) return 2;
  const record_t *deployed = NULL;
  int released = 0;
  for (size_t i = d->nrecs; i-- > 0;) {
    if (!strcmp(d->recs[i].status, "deployed") || !strcmp(d->recs[i].status, "superseded")) released = 1;
    if (!deployed && !strcmp(d->recs[i].status, "deployed")) deployed = &d->recs[i];
  }
  char *kv = NULL;
  if (discovery_server_version(d->disc, diff__version, &kv)) return 2;
  while (!kv && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  /* As the engine renders an upgrade (rc__render_work): the next revision, the server's version. */
  render_opts_t ro = {.release_name = d->req.release_name, .namespace = d->req.target_ns,
                      .revision = (int)(d->nrecs ? d->recs[d->nrecs - 1].version + 1 : 1), .is_upgrade = released,
                      .kube_version = kv && *kv ? kv : NULL};
  manifest_set_t set = {0};
  render_output_t crds = {0};
  cJSON *vals = cJSON_Duplicate(d->req.values, 1);
  int rrc = vals ? render_release(d->req.chart, vals, &ro, &set, &crds, &err) : RENDER_ENOMEM;
  free(kv);
  render_output_free(&crds);
  if (rrc) {
    fprintf(stderr, "rudder diff: rendering HelmRelease %s/%s: %s\n", c->ns, c->arg, err.data ? err.data : "out of memory");
    buf_free(&err);
    manifest_set_free(&set);
    return 2;
  }
  cJSON *labels = cJSON_CreateObject();
  cJSON_AddStringToObject(labels, DRIFT_LABEL_NAME, d->req.release_name);
  cJSON_AddStringToObject(labels, DRIFT_LABEL_NAMESPACE, d->req.storage_ns);
  for (size_t i = 0; i < set.ndocs; i++) {
    const manifest_doc_t *doc = &set.docs[i];
    if (doc->is_empty) continue;
    cJSON *want = NULL;
    manifest_error_t merr = {0};
    if (manifest_object_json(doc, d->req.release_name, d->req.target_ns, labels, &want, &merr)) {
      fprintf(stderr, "rudder diff: %s\n", merr.message[0] ? merr.message : "out of memory");
      d->errors++;
      continue;
    }
    diff__object(d, doc->api_version, doc->kind, doc->namespace, doc->name, want);
    cJSON_Delete(want);
  }
  cJSON_Delete(labels);
  /* What the deployed revision has and the new one does not: the upgrade deletes it. */
  manifest_set_t old = {0};
  manifest_error_t merr = {0};
  if (deployed && deployed->rel && deployed->rel->manifest &&
      !manifest_parse_release(deployed->rel->manifest, strlen(deployed->rel->manifest), MANIFEST_INSTALL_ORDER, &old, &merr)) {
    for (size_t i = 0; i < old.ndocs; i++) {
      const manifest_doc_t *o = &old.docs[i];
      int kept = o->is_empty;
      for (size_t k = 0; !kept && k < set.ndocs; k++)
        kept = !strcmp(o->kind, set.docs[k].kind) && !strcmp(o->name, set.docs[k].name) &&
               !strcmp(o->api_version, set.docs[k].api_version) && !strcmp(o->namespace, set.docs[k].namespace);
      const cJSON *pol = cJSON_GetObjectItemCaseSensitive(o->annotations, "helm.sh/resource-policy");
      if (!kept && !(cJSON_IsString(pol) && !strcmp(pol->valuestring, "keep")))
        diff__object(d, o->api_version, o->kind, o->namespace, o->name, NULL);
    }
  }
  manifest_set_free(&old);
  manifest_set_free(&set);
  buf_free(&err);
  if (d->out.len) fwrite(d->out.data, 1, d->out.len, stdout);
  return d->errors ? 2 : d->differs;
}

int cmd_diff_main(int argc, char **argv) {
  diff_t d = {.c = {.name = "rudder diff"}};
  bool help;
  int rc = cmd_parse(&d.c, argc, argv, CMD_NAME_REQUIRED, cmd_diff__usage, NULL, NULL, &help);
  if (rc) return help ? 0 : rc;
  if (cmd_open(&d.c)) return 2;
  if (discovery_new(d.c.client, &d.disc)) {
    fprintf(stderr, "rudder diff: out of memory\n");
    cmd_close(&d.c);
    return 2;
  }
  rc = diff__run(&d);
  int closed = 0;
  discovery_close(d.disc, diff__closed, &closed);
  while (!closed && uv_run(&d.c.loop, UV_RUN_ONCE)) {
  }
  for (size_t i = 0; i < d.nrecs; i++) record_free(&d.recs[i]);
  free(d.recs);
  req_free(&d.req);
  buf_free(&d.out);
  cmd_close(&d.c);
  return rc;
}
