/* The commands' shared client (cmd.h). */
#include "loop/cmd.h"
#include "loop/cli.h"
#include "helm/action/record.h"
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_parse(cmd_t *c, int argc, char **argv, int want_name, const char *usage, const char *const *extra,
              const char **extra_out, bool *help) {
  c->timeout_ms = 5 * 60 * 1000;
  if (help) *help = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      if (help) *help = true;
      return 1;
    }
    if (!strcmp(a, "-A") || !strcmp(a, "--all-namespaces")) {
      c->all_ns = true;
      continue;
    }
    if (a[0] != '-' || !a[1]) {
      if (!want_name || c->arg) {
        fprintf(stderr, "%s: unexpected argument \"%s\"\n%s", c->name, a, usage);
        return 2;
      }
      c->arg = a;
      continue;
    }
    const char *eq = strchr(a, '=');
    char flag[64];
    const char *v;
    if (eq) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
      v = eq + 1;
    } else {
      snprintf(flag, sizeof flag, "%s", a);
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: flag %s needs a value\n", c->name, a);
        return 2;
      }
      v = argv[++i];
    }
    int known = 1;
    if (!strcmp(flag, "--kubeconfig")) c->kubeconfig = v;
    else if (!strcmp(flag, "--context")) c->context = v;
    else if (!strcmp(flag, "-n") || !strcmp(flag, "--namespace")) c->ns = v;
    else if (c->outputs && (!strcmp(flag, "-o") || !strcmp(flag, "--output"))) {
      if (!strcmp(v, "json")) c->output = CMD_OUT_JSON;
      else if (!strcmp(v, "yaml")) c->output = CMD_OUT_YAML;
      else if (!strcmp(v, "table")) c->output = CMD_OUT_TABLE;
      else {
        fprintf(stderr, "%s: %s: unknown output format \"%s\" (json, yaml or table)\n", c->name, flag, v);
        return 2;
      }
    }
    else if (!strcmp(flag, "--timeout")) {
      if (cli_parse_ms(v, &c->timeout_ms)) {
        fprintf(stderr, "%s: --timeout: \"%s\" is not a time such as 30s or 5m\n", c->name, v);
        return 2;
      }
    } else known = 0;
    for (size_t k = 0; !known && extra && extra[k]; k++)
      if (!strcmp(flag, extra[k])) {
        extra_out[k] = v;
        known = 1;
      }
    if (!known) {
      fprintf(stderr, "%s: unknown flag %s\n%s", c->name, flag, usage);
      return 2;
    }
  }
  if (want_name == CMD_NAME_REQUIRED && !c->arg) {
    fprintf(stderr, "%s: give the HelmRelease's NAME\n%s", c->name, usage);
    return 2;
  }
  if (c->ns && !*c->ns) {
    fprintf(stderr, "%s: -n: give a namespace\n", c->name);
    return 2;
  }
  return 0;
}

int cmd_open(cmd_t *c) {
  char *err = NULL;
  int rc = kube_config_load(c->kubeconfig, c->context, &c->cfg, &err);
  if (rc) {
    fprintf(stderr, "%s: %s\n", c->name, err ? err : uv_strerror(rc));
    free(err);
    return 1;
  }
  if (!c->ns) c->ns = c->cfg.namespace;
  /* A write to a connection the server closed must be an error, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  if ((rc = uv_loop_init(&c->loop))) {
    fprintf(stderr, "%s: %s\n", c->name, uv_strerror(rc));
    kube_config_free(&c->cfg);
    return 1;
  }
  rc = kube_client_new(&c->loop, &c->cfg, &c->client, &err);
  if (rc) {
    fprintf(stderr, "%s: %s\n", c->name, err ? err : uv_strerror(rc));
    free(err);
    uv_loop_close(&c->loop);
    kube_config_free(&c->cfg);
    return 1;
  }
  /* A person waits for the answer: a server that is not there is said at once, not retried. */
  kube_client_limits_t l = kube_client_get_limits(c->client);
  l.max_retries = -1;
  kube_client_set_limits(c->client, &l);
  c->open = true;
  return 0;
}

static void cmd__closed(void *data) { *(int *)data = 1; }

void cmd_close(cmd_t *c) {
  if (!c->open) return;
  int closed = 0;
  kube_client_close(c->client, cmd__closed, &closed);
  while (!closed && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  uv_run(&c->loop, UV_RUN_DEFAULT); /* the handles' close callbacks */
  uv_loop_close(&c->loop);
  kube_config_free(&c->cfg);
  c->open = false;
}

typedef struct cmd__wait_s {
  cmd_resp_t *r;
  int done;
} cmd__wait_t;

static void cmd__got(const kube_response_t *res, void *data) {
  cmd__wait_t *w = data;
  cmd_resp_t *r = w->r;
  w->done = 1;
  r->err = res->err;
  r->status = res->status;
  if (res->body && res->body_len && !(r->body = malloc(res->body_len + 1))) {
    r->err = UV_ENOMEM;
  } else if (r->body) {
    memcpy(r->body, res->body, res->body_len);
    r->body[res->body_len] = 0;
    r->len = res->body_len;
  }
  if (res->errmsg && !(r->errmsg = strdup(res->errmsg))) r->err = UV_ENOMEM;
}

void cmd_do(cmd_t *c, const kube_req_opts_t *o, cmd_resp_t *r) {
  memset(r, 0, sizeof *r);
  cmd__wait_t w = {.r = r};
  kube_req_opts_t opts = *o;
  if (!opts.timeout_ms) opts.timeout_ms = c->timeout_ms;
  if (!kube_request(c->client, &opts, cmd__got, &w)) {
    r->err = UV_ENOMEM;
    return;
  }
  while (!w.done && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  if (!w.done) r->err = UV_EAGAIN; /* the loop ran dry: cannot happen while a request is in flight */
}

void cmd_resp_free(cmd_resp_t *r) {
  free(r->body);
  free(r->errmsg);
  memset(r, 0, sizeof *r);
}

int cmd_fail(const cmd_t *c, const cmd_resp_t *r, const char *what) {
  if (r->err) {
    fprintf(stderr, "%s: cannot reach the API server %s (kubeconfig %s): %s\n", c->name, c->cfg.server,
            c->cfg.source ? c->cfg.source : "?", r->errmsg ? r->errmsg : uv_strerror(r->err));
    return 1;
  }
  if (r->status == 404) {
    /* An object that is not there comes as a Status naming it; a kind the server does not serve as
     * a plain 404 page. */
    cJSON *st = r->body ? cJSON_Parse(r->body) : NULL;
    const char *kind = cmd_str(st, "kind");
    int object = kind && !strcmp(kind, "Status") && cmd_str(st, "details.name");
    cJSON_Delete(st);
    if (object) fprintf(stderr, "%s: %s not found\n", c->name, what);
    else
      fprintf(stderr, "%s: %s: the API server does not serve %s.%s/%s (is rudder's CRD installed?)\n", c->name, what,
              CMD_HR_RESOURCE, CMD_HR_GROUP, CMD_HR_VERSION);
    return 1;
  }
  fprintf(stderr, "%s: %s: %s\n", c->name, what, r->errmsg ? r->errmsg : "unexpected answer");
  return 1;
}

int cmd_hr_path(buf_t *b, const char *ns, const char *name, const char *sub) {
  return kube_path(b, CMD_HR_GROUP, CMD_HR_VERSION, CMD_HR_RESOURCE, ns, name, sub);
}

int cmd_get_release(cmd_t *c, cJSON **out) {
  buf_t path = BUF_INIT, what = BUF_INIT;
  *out = NULL;
  if (cmd_hr_path(&path, c->ns, c->arg, NULL) || buf_printf(&what, "HelmRelease %s/%s", c->ns, c->arg)) {
    fprintf(stderr, "%s: \"%s\" is not a usable name\n", c->name, c->arg);
    buf_free(&path);
    buf_free(&what);
    return 1;
  }
  cmd_resp_t r;
  cmd_do(c, &(kube_req_opts_t){.path = path.data}, &r);
  int rc = 0;
  if (r.err || r.status != 200) rc = cmd_fail(c, &r, what.data);
  else if (!(*out = cJSON_ParseWithLength(r.body, r.len))) {
    fprintf(stderr, "%s: %s: the API server's answer is not JSON\n", c->name, what.data);
    rc = 1;
  }
  cmd_resp_free(&r);
  buf_free(&path);
  buf_free(&what);
  return rc;
}

const char *cmd_str(const cJSON *obj, const char *path) {
  char part[128];
  const cJSON *v = obj;
  for (const char *p = path; v && *p;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (n >= sizeof part) return NULL;
    memcpy(part, p, n);
    part[n] = 0;
    v = cJSON_GetObjectItemCaseSensitive(v, part);
    p += n + (dot ? 1 : 0);
  }
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *cmd_ready(const cJSON *obj, const char *field) {
  const cJSON *conds = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions");
  const cJSON *cd;
  cJSON_ArrayForEach(cd, conds) {
    const char *t = cmd_str(cd, "type");
    if (t && !strcmp(t, "Ready")) return cmd_str(cd, field);
  }
  return NULL;
}

size_t cmd_width(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

int cmd_list_records(cmd_t *c, const char *ns, const char *name, record_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  buf_t path = BUF_INIT, sel = BUF_INIT;
  kube_path(&path, "", "v1", "secrets", ns, NULL, NULL);
  buf_printf(&sel, "owner=helm,name=%s", name);
  kube_query_add(&path, "labelSelector", sel.data ? sel.data : "");
  cmd_resp_t r;
  cmd_do(c, &(kube_req_opts_t){.path = path.data}, &r);
  buf_free(&path);
  buf_free(&sel);
  int rc = 0;
  cJSON *list = NULL;
  if (r.err || r.status != 200) rc = cmd_fail(c, &r, "listing the release records");
  else if (!(list = cJSON_ParseWithLength(r.body, r.len))) {
    fprintf(stderr, "%s: listing the release records: the API server's answer is not JSON\n", c->name);
    rc = 1;
  }
  cmd_resp_free(&r);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *it;
  size_t cap = (size_t)cJSON_GetArraySize(items);
  if (!rc && cap && !(*out = calloc(cap, sizeof **out))) {
    fprintf(stderr, "%s: out of memory\n", c->name);
    rc = 1;
  }
  cJSON_ArrayForEach(it, items) {
    if (rc) break;
    buf_t e = BUF_INIT;
    /* As helm does, a record that cannot be read stops the command; it is named. */
    if (record_from_secret(it, &(*out)[*n], &e)) {
      fprintf(stderr, "%s: %s\n", c->name, e.data ? e.data : "out of memory");
      rc = 1;
    } else {
      (*n)++;
    }
    buf_free(&e);
  }
  cJSON_Delete(list);
  if (!rc) record_sort(*out, *n);
  return rc;
}

/* ---- YAML for people (rudder diff prints both sides with it, so only changes differ; -o yaml) ---- */

static int cmd__yaml_plain(const char *s) {
  if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0])) return 0;
  static const char *const words[] = {"true", "false", "null", "yes", "no", "on", "off", "~", "True", "False",
                                      "Null", "TRUE", "FALSE", "NULL", "Yes", "No", "On", "Off", NULL};
  for (size_t i = 0; words[i]; i++)
    if (!strcmp(s, words[i])) return 0;
  char *end;
  (void)strtod(s, &end);
  if (!*end) return 0; /* would read back as a number */
  /* YAML 1.1's other implicit types: timestamps (2006-01-02...), .inf/.nan, the merge key. */
  if (strlen(s) >= 8 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
      isdigit((unsigned char)s[3]) && s[4] == '-')
    return 0;
  if (s[0] == '.' || !strcmp(s, "<<") || !strcmp(s, "=")) return 0;
  size_t n = strlen(s);
  if (s[n - 1] == ' ' || s[n - 1] == ':') return 0;
  for (const char *p = s; *p; p++) {
    if ((unsigned char)*p < 0x20 || *p == '"') return 0;
    if ((p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#')) return 0;
  }
  return 1;
}

static void cmd__yaml_str(buf_t *out, const char *s) {
  if (cmd__yaml_plain(s)) {
    buf_puts(out, s);
    return;
  }
  cJSON *j = cJSON_CreateString(s);
  char *q = j ? cJSON_PrintUnformatted(j) : NULL;
  buf_puts(out, q ? q : "\"\"");
  free(q);
  cJSON_Delete(j);
}

static void cmd__yaml_pad(buf_t *out, int n) {
  for (int i = 0; i < n; i++) buf_putc(out, ' ');
}

static int cmd__yaml_cmp(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void cmd__yaml_value(buf_t *out, const cJSON *v, int indent);

/* A scalar (or an empty collection) after "key: " or "- ". */
static int cmd__yaml_scalar(buf_t *out, const cJSON *v, int indent) {
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring, *nl = strchr(s, '\n');
    if (nl && s[0] != ' ' && !strstr(s, "\n ") && !strchr(s, '\r')) { /* a literal block, as kubectl shows it */
      size_t n = strlen(s);
      buf_puts(out, n && s[n - 1] == '\n' ? "|" : "|-");
      for (const char *p = s; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        buf_putc(out, '\n');
        if (len) cmd__yaml_pad(out, indent + 2);
        buf_append(out, p, len);
        p += len + (e ? 1 : 0);
        if (!e) break;
      }
      return 1;
    }
    cmd__yaml_str(out, s);
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

static void cmd__yaml_object(buf_t *out, const cJSON *o, int indent, int first_inline) {
  size_t n = (size_t)cJSON_GetArraySize(o), k = 0;
  const cJSON **keys = n ? malloc(n * sizeof *keys) : NULL;
  if (!keys) return;
  for (const cJSON *c = o->child; c; c = c->next) keys[k++] = c;
  qsort(keys, n, sizeof *keys, cmd__yaml_cmp); /* as sigs.k8s.io/yaml prints them */
  for (size_t i = 0; i < n; i++) {
    if (i || !first_inline) cmd__yaml_pad(out, indent);
    cmd__yaml_str(out, keys[i]->string);
    buf_putc(out, ':');
    size_t at = out->len;
    buf_putc(out, ' ');
    if (cmd__yaml_scalar(out, keys[i], indent)) {
      buf_putc(out, '\n');
      continue;
    }
    out->len = at; /* no space before a nested block */
    out->data[at] = 0;
    buf_putc(out, '\n');
    cmd__yaml_value(out, keys[i], cJSON_IsArray(keys[i]) ? indent : indent + 2);
  }
  free(keys);
}

static void cmd__yaml_value(buf_t *out, const cJSON *v, int indent) {
  if (cJSON_IsObject(v)) {
    cmd__yaml_object(out, v, indent, 0);
    return;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, v) {
    cmd__yaml_pad(out, indent);
    buf_puts(out, "- ");
    if (cmd__yaml_scalar(out, it, indent + 2)) buf_putc(out, '\n');
    else if (cJSON_IsObject(it)) cmd__yaml_object(out, it, indent + 2, 1);
    else { /* a list in a list */
      buf_putc(out, '\n');
      cmd__yaml_value(out, it, indent + 2);
    }
  }
}

void cmd_yaml(buf_t *out, const cJSON *v) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    if (v->child) cmd__yaml_value(out, v, 0);
    else buf_puts(out, cJSON_IsObject(v) ? "{}\n" : "[]\n");
  } else if (cmd__yaml_scalar(out, v, 0)) {
    buf_putc(out, '\n');
  }
}

int cmd_print_data(const cmd_t *c, const cJSON *v) {
  buf_t out = BUF_INIT;
  char *json = NULL;
  if (c->output == CMD_OUT_YAML) cmd_yaml(&out, v);
  else if ((json = cJSON_PrintUnformatted(v))) buf_printf(&out, "%s\n", json);
  free(json);
  if (!out.data) {
    fprintf(stderr, "%s: out of memory\n", c->name);
    return 1;
  }
  fwrite(out.data, 1, out.len, stdout);
  buf_free(&out);
  return 0;
}
