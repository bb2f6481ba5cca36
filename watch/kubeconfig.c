#include "watch/kubeconfig.h"
#include "watch/internal.h"
#include "base/buf.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <uv.h>
#include <yaml.h>

#define KC__MAX_FILE (16u << 20) /* kubeconfigs and PEM files are small; refuse runaway files */
#define KC__SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct kc__ctx_s {
  yaml_document_t doc;
  const char *path; /* the kubeconfig file, for messages */
  char *dir;        /* its directory, for relative file references */
  char **errmsg;
  bool no_local;    /* text from elsewhere (a Secret): no file is read and no command run on its say */
  bool allow_exec;  /* ... except the exec plugin it names, when the operator allows it */
} kc__ctx_t;

void kube_exec_free(kube_exec_t *e) {
  if (!e) return;
  free(e->command);
  for (size_t i = 0; i < e->n_args; i++) free(e->args[i]);
  for (size_t i = 0; i < e->n_env; i++) free(e->env[i]);
  free(e->args);
  free(e->env);
  free(e->api_version);
  free(e->install_hint);
  free(e);
}

static char **kc__copy_list(char *const *l, size_t n) {
  char **o = calloc(n + 1, sizeof *o);
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++)
    if (!(o[i] = strdup(l[i]))) {
      while (i--) free(o[i]);
      free(o);
      return NULL;
    }
  return o;
}

kube_exec_t *kube_exec_copy(const kube_exec_t *e) {
  if (!e) return NULL;
  kube_exec_t *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->command = watch__strdup(e->command);
  d->api_version = watch__strdup(e->api_version);
  d->install_hint = watch__strdup(e->install_hint);
  d->args = kc__copy_list(e->args, e->n_args);
  if (d->args) d->n_args = e->n_args;
  d->env = kc__copy_list(e->env, e->n_env);
  if (d->env) d->n_env = e->n_env;
  if (!d->command || !d->api_version || !d->args || !d->env || (e->install_hint && !d->install_hint)) {
    kube_exec_free(d);
    return NULL;
  }
  return d;
}

void kube_config_free(kube_config_t *cfg) {
  kube_exec_free(cfg->exec);
  free(cfg->server);
  free(cfg->scheme);
  free(cfg->host);
  free(cfg->base_path);
  free(cfg->ca_pem);
  free(cfg->cert_pem);
  free(cfg->key_pem);
  free(cfg->token);
  free(cfg->token_file);
  free(cfg->namespace);
  free(cfg->tls_server_name);
  free(cfg->source);
  free(cfg->context);
  free(cfg->proxy_host);
  free(cfg->proxy_auth);
  free(cfg->impersonate_user);
  memset(cfg, 0, sizeof *cfg);
}

int kube_config_set_server(kube_config_t *cfg, const char *url, char **errmsg) {
  const char *p = url, *sep = strstr(url, "://");
  char *scheme;
  if (sep) {
    scheme = strndup(url, (size_t)(sep - url));
    p = sep + 3;
  } else {
    scheme = strdup("https"); /* as client-go: a bare host:port means https */
  }
  if (!scheme) return UV_ENOMEM;
  for (char *s = scheme; *s; s++) *s = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
  if (strcmp(scheme, "https") && strcmp(scheme, "http")) {
    watch__errf(errmsg, "server URL \"%s\": scheme \"%s\" is not http or https", url, scheme);
    free(scheme);
    return UV_EINVAL;
  }
  const char *host_start = p, *host_end, *port_str = NULL;
  const char *auth_end = p + strcspn(p, "/?#");
  if (*p == '[') {
    const char *rb = memchr(p, ']', (size_t)(auth_end - p));
    if (!rb) {
      watch__errf(errmsg, "server URL \"%s\": unterminated IPv6 address", url);
      free(scheme);
      return UV_EINVAL;
    }
    host_start = p + 1;
    host_end = rb;
    if (rb + 1 < auth_end && rb[1] == ':') port_str = rb + 2;
    else if (rb + 1 != auth_end) {
      watch__errf(errmsg, "server URL \"%s\": junk after IPv6 address", url);
      free(scheme);
      return UV_EINVAL;
    }
  } else {
    const char *colon = memchr(p, ':', (size_t)(auth_end - p));
    host_end = colon ? colon : auth_end;
    if (colon) port_str = colon + 1;
  }
  if (host_end == host_start || memchr(host_start, '@', (size_t)(host_end - host_start))) {
    watch__errf(errmsg, "server URL \"%s\": missing or invalid host", url);
    free(scheme);
    return UV_EINVAL;
  }
  int port = strcmp(scheme, "https") == 0 ? 443 : 80;
  if (port_str) {
    char *end;
    long v = strtol(port_str, &end, 10);
    if (end != auth_end || end == port_str || v <= 0 || v > 65535) {
      watch__errf(errmsg, "server URL \"%s\": invalid port", url);
      free(scheme);
      return UV_EINVAL;
    }
    port = (int)v;
  }
  /* Keep only the path; a trailing slash would double up with request paths. */
  size_t plen = strcspn(auth_end, "?#");
  while (plen && auth_end[plen - 1] == '/') plen--;
  char *host = strndup(host_start, (size_t)(host_end - host_start));
  char *base = strndup(auth_end, plen);
  char *server = strdup(url);
  if (!host || !base || !server) {
    free(host); free(base); free(server); free(scheme);
    return UV_ENOMEM;
  }
  free(cfg->scheme); free(cfg->host); free(cfg->base_path); free(cfg->server);
  cfg->scheme = scheme;
  cfg->host = host;
  cfg->base_path = base;
  cfg->server = server;
  cfg->port = port;
  return 0;
}

/* ---- YAML document helpers ---- */

static yaml_node_t *kc__get(kc__ctx_t *x, yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(&x->doc, pr->key);
    if (k && k->type == YAML_SCALAR_NODE && strlen(key) == k->data.scalar.length &&
        memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
      return yaml_document_get_node(&x->doc, pr->value);
  }
  return NULL;
}

/* Returns the scalar under key; NULL when absent or null. Fails (UV_EINVAL) when not a scalar. */
static int kc__str(kc__ctx_t *x, yaml_node_t *map, const char *key, const char *where, const char **out) {
  yaml_node_t *n = kc__get(x, map, key);
  *out = NULL;
  if (!n) return 0;
  if (n->type != YAML_SCALAR_NODE) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.%s must be a string", x->path, where, key);
    return UV_EINVAL;
  }
  const char *v = (const char *)n->data.scalar.value;
  if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (!strcmp(v, "") || !strcmp(v, "null") || !strcmp(v, "~")))
    return 0;
  *out = v;
  return 0;
}

/* Finds the entry named name in the top-level list `list` and returns its `inner` mapping. */
static yaml_node_t *kc__named(kc__ctx_t *x, const char *list, const char *name, const char *inner) {
  yaml_node_t *seq = kc__get(x, yaml_document_get_root_node(&x->doc), list);
  if (!seq || seq->type != YAML_SEQUENCE_NODE) return NULL;
  for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
    yaml_node_t *e = yaml_document_get_node(&x->doc, *it);
    yaml_node_t *n = kc__get(x, e, "name");
    if (n && n->type == YAML_SCALAR_NODE && strcmp((const char *)n->data.scalar.value, name) == 0) {
      yaml_node_t *in = kc__get(x, e, inner);
      /* An entry with an empty body (e.g. `user: {}` or `user:`) still exists. */
      return in ? in : e;
    }
  }
  return NULL;
}

static char *kc__resolve_path(kc__ctx_t *x, const char *file) {
  if (file[0] == '/' || !x->dir) return strdup(file);
  buf_t b = BUF_INIT;
  if (buf_printf(&b, "%s/%s", x->dir, file)) { buf_free(&b); return NULL; }
  return buf_steal(&b);
}

/* Loads `data_key` (base64) or else the file named by `file_key` into *out. */
static int kc__blob(kc__ctx_t *x, yaml_node_t *map, const char *where, const char *data_key, const char *file_key,
                    char **out, size_t *out_len) {
  const char *data, *file;
  int r;
  if ((r = kc__str(x, map, data_key, where, &data)) || (r = kc__str(x, map, file_key, where, &file))) return r;
  if (data) {
    r = watch__b64_decode(data, strlen(data), out, out_len);
    if (r == UV_EINVAL) watch__errf(x->errmsg, "kubeconfig %s: %s.%s is not valid base64", x->path, where, data_key);
    return r;
  }
  if (!file) return 0;
  if (x->no_local) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.%s: files are not read for a kubeconfig that is not a local file; "
                "give %s", x->path, where, file_key, data_key);
    return UV_EINVAL;
  }
  char *full = kc__resolve_path(x, file);
  if (!full) return UV_ENOMEM;
  r = watch__read_file(full, KC__MAX_FILE, out, out_len);
  if (r) watch__errf(x->errmsg, "kubeconfig %s: %s.%s: cannot read %s: %s", x->path, where, file_key, full, uv_strerror(r));
  free(full);
  return r;
}

static int kc__dup(kc__ctx_t *x, char **dst, const char *v) {
  if (!v) return 0;
  *dst = strdup(v);
  return *dst ? 0 : UV_ENOMEM;
}

/* users[].user.exec: command, args, env [{name, value}], apiVersion, installHint. */
static int kc__exec(kc__ctx_t *x, yaml_node_t *ex, const char *where, kube_exec_t **out) {
  char w[700];
  snprintf(w, sizeof w, "%s.exec", where);
  const char *cmd, *api, *hint;
  int r;
  if ((r = kc__str(x, ex, "command", w, &cmd)) || (r = kc__str(x, ex, "apiVersion", w, &api)) ||
      (r = kc__str(x, ex, "installHint", w, &hint)))
    return r;
  if (!cmd) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.command is not set", x->path, w);
    return UV_EINVAL;
  }
  if (!api) api = "client.authentication.k8s.io/v1";
  if (strcmp(api, "client.authentication.k8s.io/v1") && strcmp(api, "client.authentication.k8s.io/v1beta1")) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.apiVersion \"%s\" is not supported (use client.authentication.k8s.io/v1)",
                x->path, w, api);
    return UV_EINVAL;
  }
  kube_exec_t *e = calloc(1, sizeof *e);
  if (!e) return UV_ENOMEM;
  yaml_node_t *args = kc__get(x, ex, "args"), *env = kc__get(x, ex, "env");
  size_t na = args && args->type == YAML_SEQUENCE_NODE ? (size_t)(args->data.sequence.items.top - args->data.sequence.items.start) : 0;
  size_t ne = env && env->type == YAML_SEQUENCE_NODE ? (size_t)(env->data.sequence.items.top - env->data.sequence.items.start) : 0;
  e->args = calloc(na + 1, sizeof *e->args);
  e->env = calloc(ne + 1, sizeof *e->env);
  /* client-go: a relative command with a slash is relative to the kubeconfig's directory. */
  e->command = strchr(cmd, '/') ? kc__resolve_path(x, cmd) : strdup(cmd);
  e->api_version = strdup(api);
  e->install_hint = watch__strdup(hint);
  if (!e->args || !e->env || !e->command || !e->api_version || (hint && !e->install_hint)) { r = UV_ENOMEM; goto fail; }
  for (size_t i = 0; i < na; i++) {
    yaml_node_t *a = yaml_document_get_node(&x->doc, args->data.sequence.items.start[i]);
    if (!a || a->type != YAML_SCALAR_NODE) {
      watch__errf(x->errmsg, "kubeconfig %s: %s.args[%zu] must be a string", x->path, w, i);
      r = UV_EINVAL;
      goto fail;
    }
    if (!(e->args[e->n_args++] = strdup((const char *)a->data.scalar.value))) { r = UV_ENOMEM; goto fail; }
  }
  for (size_t i = 0; i < ne; i++) {
    yaml_node_t *ev = yaml_document_get_node(&x->doc, env->data.sequence.items.start[i]);
    const char *n, *v;
    char ew[760];
    snprintf(ew, sizeof ew, "%s.env[%zu]", w, i);
    if ((r = kc__str(x, ev, "name", ew, &n)) || (r = kc__str(x, ev, "value", ew, &v))) goto fail;
    if (!n || strchr(n, '=')) {
      watch__errf(x->errmsg, "kubeconfig %s: %s.name is missing or invalid", x->path, ew);
      r = UV_EINVAL;
      goto fail;
    }
    buf_t b = BUF_INIT;
    if (buf_printf(&b, "%s=%s", n, v ? v : "")) { buf_free(&b); r = UV_ENOMEM; goto fail; }
    e->env[e->n_env++] = buf_steal(&b);
  }
  *out = e;
  return 0;
fail:
  kube_exec_free(e);
  return r;
}

static int kc__parse(kc__ctx_t *x, const char *text, size_t len) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return UV_ENOMEM;
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  int ok = yaml_parser_load(&p, &x->doc);
  if (!ok) {
    watch__errf(x->errmsg, "kubeconfig %s: YAML error at line %zu column %zu: %s", x->path,
                p.problem_mark.line + 1, p.problem_mark.column + 1, p.problem ? p.problem : "unknown");
    yaml_parser_delete(&p);
    return UV_EINVAL;
  }
  yaml_parser_delete(&p);
  yaml_node_t *root = yaml_document_get_root_node(&x->doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    watch__errf(x->errmsg, "kubeconfig %s: not a YAML mapping (empty or malformed file)", x->path);
    yaml_document_delete(&x->doc);
    return UV_EINVAL;
  }
  return 0;
}

static int kc__load(kc__ctx_t *x, const char *context_override, kube_config_t *out) {
  int r;
  yaml_node_t *root = yaml_document_get_root_node(&x->doc);
  const char *ctx_name = context_override;
  if (!ctx_name && (r = kc__str(x, root, "current-context", "", &ctx_name))) return r;
  if (!ctx_name) {
    watch__errf(x->errmsg, "kubeconfig %s: current-context is not set and no context was given", x->path);
    return UV_EINVAL;
  }
  yaml_node_t *ctx = kc__named(x, "contexts", ctx_name, "context");
  if (!ctx) {
    watch__errf(x->errmsg, "kubeconfig %s: context \"%s\" not found in contexts", x->path, ctx_name);
    return UV_EINVAL;
  }
  char where[600];
  snprintf(where, sizeof where, "contexts[\"%s\"].context", ctx_name);
  const char *cluster_name, *user_name, *ns;
  if ((r = kc__str(x, ctx, "cluster", where, &cluster_name)) || (r = kc__str(x, ctx, "user", where, &user_name)) ||
      (r = kc__str(x, ctx, "namespace", where, &ns)))
    return r;
  if (!cluster_name) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.cluster is not set", x->path, where);
    return UV_EINVAL;
  }
  yaml_node_t *cl = kc__named(x, "clusters", cluster_name, "cluster");
  if (!cl) {
    watch__errf(x->errmsg, "kubeconfig %s: cluster \"%s\" (from context \"%s\") not found in clusters", x->path,
                cluster_name, ctx_name);
    return UV_EINVAL;
  }
  snprintf(where, sizeof where, "clusters[\"%s\"].cluster", cluster_name);
  const char *server, *insecure, *sni;
  if ((r = kc__str(x, cl, "server", where, &server)) || (r = kc__str(x, cl, "insecure-skip-tls-verify", where, &insecure)) ||
      (r = kc__str(x, cl, "tls-server-name", where, &sni)))
    return r;
  if (!server) {
    watch__errf(x->errmsg, "kubeconfig %s: %s.server is not set", x->path, where);
    return UV_EINVAL;
  }
  char *uerr = NULL;
  if ((r = kube_config_set_server(out, server, &uerr))) {
    if (r == UV_EINVAL) watch__errf(x->errmsg, "kubeconfig %s: %s.server: %s", x->path, where, uerr);
    free(uerr);
    return r;
  }
  out->insecure_skip_tls_verify = insecure && (!strcasecmp(insecure, "true") || !strcmp(insecure, "1"));
  if ((r = kc__dup(x, &out->tls_server_name, sni))) return r;
  if ((r = kc__blob(x, cl, where, "certificate-authority-data", "certificate-authority", &out->ca_pem, &out->ca_pem_len)))
    return r;

  if (user_name) {
    yaml_node_t *u = kc__named(x, "users", user_name, "user");
    if (!u) {
      watch__errf(x->errmsg, "kubeconfig %s: user \"%s\" (from context \"%s\") not found in users", x->path,
                  user_name, ctx_name);
      return UV_EINVAL;
    }
    snprintf(where, sizeof where, "users[\"%s\"].user", user_name);
    if ((r = kc__blob(x, u, where, "client-certificate-data", "client-certificate", &out->cert_pem, &out->cert_pem_len)) ||
        (r = kc__blob(x, u, where, "client-key-data", "client-key", &out->key_pem, &out->key_pem_len)))
      return r;
    if (!out->cert_pem != !out->key_pem) {
      watch__errf(x->errmsg, "kubeconfig %s: %s has a client %s but no client %s", x->path, where,
                  out->cert_pem ? "certificate" : "key", out->cert_pem ? "key" : "certificate");
      return UV_EINVAL;
    }
    const char *token, *token_file;
    if ((r = kc__str(x, u, "token", where, &token)) || (r = kc__str(x, u, "tokenFile", where, &token_file))) return r;
    if ((r = kc__dup(x, &out->token, token))) return r;
    if (token_file && !token && x->no_local) {
      watch__errf(x->errmsg, "kubeconfig %s: %s.tokenFile: files are not read for a kubeconfig that is not a local "
                  "file; give token", x->path, where);
      return UV_EINVAL;
    }
    if (token_file && !token) {
      if (!(out->token_file = kc__resolve_path(x, token_file))) return UV_ENOMEM;
      size_t n;
      r = watch__read_file(out->token_file, KC__MAX_FILE, &out->token, &n);
      if (r) {
        watch__errf(x->errmsg, "kubeconfig %s: %s.tokenFile: cannot read %s: %s", x->path, where, out->token_file,
                    uv_strerror(r));
        return r;
      }
      /* Token files usually end with a newline that must not reach the header. */
      while (n && (out->token[n - 1] == '\n' || out->token[n - 1] == '\r' || out->token[n - 1] == ' '))
        out->token[--n] = 0;
    }
    yaml_node_t *ex = kc__get(x, u, "exec");
    if (ex && !out->token && x->no_local && !x->allow_exec) {
      watch__errf(x->errmsg, "kubeconfig %s: %s.exec: credential plugins are not run for a kubeconfig that is not a "
                  "local file (unless the controller runs with --insecure-kubeconfig-exec); give a token or a "
                  "client certificate", x->path, where);
      return UV_ENOTSUP;
    }
    if (ex && !out->token && (r = kc__exec(x, ex, where, &out->exec))) return r;
    if (!out->token && !out->cert_pem && !out->exec && kc__get(x, u, "auth-provider")) {
      watch__errf(x->errmsg, "kubeconfig %s: %s uses an auth-provider credential plugin, which is not "
                  "supported; give a token, tokenFile, client certificate or exec plugin", x->path, where);
      return UV_ENOTSUP;
    }
  }
  if ((r = kc__dup(x, &out->namespace, ns ? ns : "default")) || (r = kc__dup(x, &out->context, ctx_name))) return r;
  return 0;
}

static int kube_config__load_file(const char *path, const char *context_override, kube_config_t *out, char **errmsg) {
  kc__ctx_t x = {.path = path, .errmsg = errmsg};
  char *text;
  size_t len;
  int r = watch__read_file(path, KC__MAX_FILE, &text, &len);
  if (r) {
    watch__errf(errmsg, "kubeconfig %s: cannot read: %s", path, uv_strerror(r));
    return r;
  }
  const char *slash = strrchr(path, '/');
  x.dir = slash ? strndup(path, (size_t)(slash == path ? 1 : slash - path)) : NULL;
  if (slash && !x.dir) { free(text); return UV_ENOMEM; }
  if ((r = kc__parse(&x, text, len)) == 0) {
    r = kc__load(&x, context_override, out);
    yaml_document_delete(&x.doc);
  }
  free(text);
  free(x.dir);
  if (r == 0 && !(out->source = strdup(path))) r = UV_ENOMEM;
  if (r) {
    if (r == UV_ENOMEM && errmsg && !*errmsg) watch__errf(errmsg, "kubeconfig %s: out of memory", path);
    kube_config_free(out);
  }
  return r;
}

int kube_config_parse(const char *text, size_t len, const char *what, kube_config_t *out, char **errmsg) {
  return kube_config_parse_exec(text, len, what, false, out, errmsg);
}

int kube_config_parse_exec(const char *text, size_t len, const char *what, bool allow_exec, kube_config_t *out,
                           char **errmsg) {
  kc__ctx_t x = {.path = what, .errmsg = errmsg, .no_local = true, .allow_exec = allow_exec};
  memset(out, 0, sizeof *out);
  int r = kc__parse(&x, text, len);
  if (r == 0) {
    r = kc__load(&x, NULL, out);
    yaml_document_delete(&x.doc);
  }
  if (r == 0 && !(out->source = strdup(what))) r = UV_ENOMEM;
  if (r) {
    if (r == UV_ENOMEM && errmsg && !*errmsg) watch__errf(errmsg, "kubeconfig %s: out of memory", what);
    kube_config_free(out);
  }
  return r;
}

int kube_config_in_cluster(const char *dir, kube_config_t *out, char **errmsg) {
  memset(out, 0, sizeof *out);
  const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    watch__errf(errmsg, "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    return UV_EINVAL;
  }
  if (!dir) dir = KC__SA_DIR;
  buf_t b = BUF_INIT;
  int r = 0;
  size_t n;
  if (strchr(host, ':')) r = buf_printf(&b, "https://[%s]:%s", host, port);
  else r = buf_printf(&b, "https://%s:%s", host, port);
  char *uerr = NULL;
  if (r || (r = kube_config_set_server(out, b.data, &uerr))) {
    if (r == UV_EINVAL) watch__errf(errmsg, "in-cluster config: %s", uerr);
    goto fail;
  }
  buf_reset(&b);
  if ((r = buf_printf(&b, "%s/token", dir)) || !(out->token_file = strdup(b.data))) { r = UV_ENOMEM; goto fail; }
  if ((r = watch__read_file(out->token_file, KC__MAX_FILE, &out->token, &n))) {
    watch__errf(errmsg, "in-cluster config: cannot read service account token %s: %s", out->token_file, uv_strerror(r));
    goto fail;
  }
  while (n && (out->token[n - 1] == '\n' || out->token[n - 1] == '\r')) out->token[--n] = 0;
  buf_reset(&b);
  if ((r = buf_printf(&b, "%s/ca.crt", dir))) goto fail;
  if ((r = watch__read_file(b.data, KC__MAX_FILE, &out->ca_pem, &out->ca_pem_len))) {
    watch__errf(errmsg, "in-cluster config: cannot read service account CA %s: %s", b.data, uv_strerror(r));
    goto fail;
  }
  buf_reset(&b);
  if ((r = buf_printf(&b, "%s/namespace", dir))) goto fail;
  if (watch__read_file(b.data, 4096, &out->namespace, &n) == 0) {
    while (n && (out->namespace[n - 1] == '\n' || out->namespace[n - 1] == ' ')) out->namespace[--n] = 0;
  }
  if (!out->namespace || !*out->namespace) {
    free(out->namespace);
    if (!(out->namespace = strdup("default"))) { r = UV_ENOMEM; goto fail; }
  }
  if (!(out->source = strdup("in-cluster"))) { r = UV_ENOMEM; goto fail; }
  free(uerr);
  buf_free(&b);
  return 0;
fail:
  if (r == UV_ENOMEM && errmsg && !*errmsg) watch__errf(errmsg, "in-cluster config: out of memory");
  free(uerr);
  buf_free(&b);
  kube_config_free(out);
  return r;
}

int kube_config_load(const char *path, const char *context_override, kube_config_t *out, char **errmsg) {
  memset(out, 0, sizeof *out);
  if (errmsg) *errmsg = NULL;
  if (path) return kube_config__load_file(path, context_override, out, errmsg);
  const char *env = getenv("KUBECONFIG");
  if (env && *env) {
    /* Like kubectl's list, but only the first entry is read (merging is not supported). */
    size_t n = strcspn(env, ":");
    char *first = strndup(env, n);
    if (!first) return UV_ENOMEM;
    int r = kube_config__load_file(first, context_override, out, errmsg);
    free(first);
    return r;
  }
  const char *sh = getenv("KUBERNETES_SERVICE_HOST");
  if (sh && *sh && access(KC__SA_DIR "/token", R_OK) == 0) return kube_config_in_cluster(NULL, out, errmsg);
  const char *home = getenv("HOME");
  if (!home || !*home) {
    watch__errf(errmsg, "no Kubernetes configuration: KUBECONFIG and HOME are unset and not running in a cluster");
    return UV_ENOENT;
  }
  buf_t b = BUF_INIT;
  if (buf_printf(&b, "%s/.kube/config", home)) { buf_free(&b); return UV_ENOMEM; }
  int r;
  if (access(b.data, F_OK) != 0) {
    watch__errf(errmsg, "no Kubernetes configuration: KUBECONFIG is unset, not running in a cluster "
                "(no KUBERNETES_SERVICE_HOST or service account token), and %s does not exist", b.data);
    r = UV_ENOENT;
  } else {
    r = kube_config__load_file(b.data, context_override, out, errmsg);
  }
  buf_free(&b);
  return r;
}
