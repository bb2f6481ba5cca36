/* Kubernetes client configuration: a kubeconfig file, or in-cluster service-account credentials. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* A client.authentication.k8s.io exec credential plugin (kubeconfig users[].user.exec). */
typedef struct kube_exec_s {
  char *command;        /* resolved against the kubeconfig's directory when relative with a '/' */
  char **args;          /* n_args strings */
  size_t n_args;
  char **env;           /* "NAME=value" strings added to the environment */
  size_t n_env;
  char *api_version;    /* e.g. client.authentication.k8s.io/v1 */
  char *install_hint;   /* shown when the command cannot be run; NULL when none */
} kube_exec_t;

typedef struct kube_config_s {
  char *server;          /* the server URL as written, e.g. "https://127.0.0.1:6443" */
  char *scheme;          /* "https" or "http" */
  char *host;            /* host name or IP literal, without IPv6 brackets */
  int port;              /* explicit port, else 443/80 */
  char *base_path;       /* path prefix without trailing slash ("" when none), e.g. "/k8s/clusters/c-1" */
  char *ca_pem;          /* CA bundle (PEM or DER), NUL-terminated; NULL means none given */
  size_t ca_pem_len;
  char *cert_pem;        /* client certificate, NUL-terminated; NULL when none */
  size_t cert_pem_len;
  char *key_pem;         /* client private key, NUL-terminated; NULL when none */
  size_t key_pem_len;
  char *token;           /* bearer token (read from token_file when that is set); NULL when none */
  char *token_file;      /* file the token is re-read from as it rotates; NULL when none */
  char *namespace;       /* context's namespace, else "default" */
  char *tls_server_name; /* name to verify the server certificate against instead of host; NULL when none */
  bool insecure_skip_tls_verify;
  char *source;          /* the file it came from, or "in-cluster" */
  char *context;         /* the context used (NULL for in-cluster) */
  kube_exec_t *exec;     /* exec credential plugin; NULL when none */
  char *impersonate_user; /* sent as Impersonate-User on every request (e.g. system:serviceaccount:NS:NAME); NULL: none */
  /* An HTTP proxy between the client and the server (not read from kubeconfig files yet; watch/fetch.c
   * fills it in from the environment): https goes through a CONNECT tunnel (TLS still verifies the
   * server's name), http is sent to the proxy in absolute form. NULL: connect directly. */
  char *proxy_host;      /* host name or IP literal, without IPv6 brackets */
  int proxy_port;
  char *proxy_auth;      /* the Proxy-Authorization header value (e.g. "Basic dXNlcjpwYXNz"); NULL when none */
} kube_config_t;

/* Loads path (or, when NULL: $KUBECONFIG's first entry, else in-cluster, else ~/.kube/config) using
 * context_override or the current-context; 0 or a negative UV_E* code with *errmsg (malloc'd) set. */
int kube_config_load(const char *path, const char *context_override, kube_config_t *out, char **errmsg);
/* Parses kubeconfig text that is not a local file (e.g. a Secret's; `what` names it in messages) with
 * its current-context. File references (certificate-authority, client-certificate, client-key,
 * tokenFile) and exec plugins are refused: such text must not make the process read its files or
 * run commands. 0 or a negative UV_E* code with *errmsg (malloc'd) set. */
int kube_config_parse(const char *text, size_t len, const char *what, kube_config_t *out, char **errmsg);
/* kube_config_parse that, with allow_exec, runs exec credential plugins as for a local file (the
 * controller's --insecure-kubeconfig-exec: whoever writes the Secret chooses a command it runs). */
int kube_config_parse_exec(const char *text, size_t len, const char *what, bool allow_exec, kube_config_t *out,
                           char **errmsg);
/* Loads the in-cluster service-account configuration (KUBERNETES_SERVICE_HOST/PORT and the token,
 * CA and namespace files under dir, normally /var/run/secrets/kubernetes.io/serviceaccount). */
int kube_config_in_cluster(const char *dir, kube_config_t *out, char **errmsg);
/* Parses a server URL into cfg's scheme, host, port and base_path; 0 or UV_EINVAL with *errmsg. */
int kube_config_set_server(kube_config_t *cfg, const char *url, char **errmsg);
/* Deep-copies an exec plugin configuration; NULL when out of memory. */
kube_exec_t *kube_exec_copy(const kube_exec_t *e);
/* Frees an exec plugin configuration (NULL is fine). */
void kube_exec_free(kube_exec_t *e);
/* Frees everything the config holds and zeroes it. */
void kube_config_free(kube_config_t *cfg);
