/* What the commands for people (get, reconcile, suspend, resume, diff, history) share: their flags
 * (the controller's kubeconfig rules: --kubeconfig, --context, $KUBECONFIG, in-cluster,
 * ~/.kube/config), a client on a loop of their own, requests that wait on that loop, and the
 * HelmRelease they name. A command is a client of the API server, not the controller. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "watch/client.h"
#include "watch/kubeconfig.h"

#define CMD_HR_GROUP "rudder.dev"
#define CMD_HR_VERSION "v1alpha1"
#define CMD_HR_RESOURCE "helmreleases"

typedef struct cmd_s {
  const char *name;             /* the command, for messages: "rudder get" */
  const char *kubeconfig, *context;
  const char *ns;               /* -n; after cmd_open: the kubeconfig's namespace when not given */
  bool all_ns;                  /* -A */
  uint64_t timeout_ms;          /* --timeout: how long a command waits (default 5m) */
  const char *arg;              /* the NAME argument, when the command takes one */
  bool outputs;                 /* set by the command: it takes -o/--output */
  int output;                   /* -o: CMD_OUT_* */
  uv_loop_t loop;
  kube_config_t cfg;
  kube_client_t *client;
  bool open;
} cmd_t;

/* -o/--output: the default table, or the same data as JSON or YAML for programs. */
enum { CMD_OUT_TABLE = 0, CMD_OUT_JSON, CMD_OUT_YAML };

/* A response, copied out of the client's callback. */
typedef struct cmd_resp_s {
  int err, status;
  char *body, *errmsg;
  size_t len;
} cmd_resp_t;

/* Parses the common flags into c; extra lists the command's own value flags (NULL-terminated,
 * e.g. "--max"), whose values go to extra_out in the same order (may be NULL). want_name: CMD_NAME_*.
 * 0; 2 after printing the error (or 1 after printing usage for --help: then *help is set). */
enum { CMD_NAME_NONE = 0, CMD_NAME_OPTIONAL, CMD_NAME_REQUIRED };
int cmd_parse(cmd_t *c, int argc, char **argv, int want_name, const char *usage, const char *const *extra,
              const char **extra_out, bool *help);
/* Loads the kubeconfig and makes the client; 0, or 1 after printing why. */
int cmd_open(cmd_t *c);
/* Closes the client and the loop (a no-op when not open). */
void cmd_close(cmd_t *c);
/* Sends one request and waits for its response on the command's loop; r is the caller's to free
 * (cmd_resp_free). */
void cmd_do(cmd_t *c, const kube_req_opts_t *o, cmd_resp_t *r);
/* Frees what cmd_do filled in. */
void cmd_resp_free(cmd_resp_t *r);
/* Prints "rudder X: <what>: <why>" for a failed response: the server unreachable, the object
 * missing (named as `kind ns/name`), the kind unknown to the server, or the API's own message.
 * Returns 1. */
int cmd_fail(const cmd_t *c, const cmd_resp_t *r, const char *what);
/* Reads the HelmRelease c->ns/c->arg into *out (the caller's to cJSON_Delete); 0 or 1 after
 * printing why. */
int cmd_get_release(cmd_t *c, cJSON **out);
/* The path of HelmReleases (name NULL: the collection) in ns (NULL: every namespace) into b. */
int cmd_hr_path(buf_t *b, const char *ns, const char *name, const char *sub);
/* "Ready" condition's field (status, reason or message) of obj, or NULL. */
const char *cmd_ready(const cJSON *obj, const char *field);
/* obj's string at a dotted path ("status.history"), or NULL. */
const char *cmd_str(const cJSON *obj, const char *path);
/* The columns a cell takes: its UTF-8 characters. */
size_t cmd_width(const char *s);
struct record_s;
/* The records of release `name` stored in ns (Helm's Secrets), oldest first, into *out (the
 * caller frees each with record_free, then the array); 0 or 1 after printing why. */
int cmd_list_records(cmd_t *c, const char *ns, const char *name, struct record_s **out, size_t *n);
/* Appends v as block YAML (keys sorted, as sigs.k8s.io/yaml prints them) to out. */
void cmd_yaml(buf_t *out, const cJSON *v);
/* Prints v to stdout as c->output asks (CMD_OUT_JSON: one line, as helm -o json; CMD_OUT_YAML);
 * 0, or 1 after printing why (out of memory). */
int cmd_print_data(const cmd_t *c, const cJSON *v);
