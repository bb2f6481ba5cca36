#include "loop/controller.h"
#include "base/log.h"
#include "buildinfo.h"
#include "reconcile/helmrelease.h"
#include "watch/client.h"
#include "watch/discovery.h"
#include "watch/kubeconfig.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctl_s {
  uv_loop_t loop;
  uv_signal_t sigterm, sigint;
  kube_config_t cfg;
  kube_client_t *client;
  discovery_t *disc;
  hr_reconciler_t *hr;
  int stopping;
  int closes;
} ctl_t;

static void ctl__handle_closed(uv_handle_t *h) { (void)h; }

static void ctl__client_closed(void *data) {
  ctl_t *c = data;
  c->client = NULL;
  uv_close((uv_handle_t *)&c->sigterm, ctl__handle_closed);
  uv_close((uv_handle_t *)&c->sigint, ctl__handle_closed);
}

static void ctl__disc_closed(void *data) {
  ctl_t *c = data;
  c->disc = NULL;
  kube_client_close(c->client, ctl__client_closed, c);
}

static void ctl__hr_stopped(void *data) {
  ctl_t *c = data;
  c->hr = NULL;
  discovery_close(c->disc, ctl__disc_closed, c);
}

/* Shutdown order is the reverse of start: reconcilers drain, then the mapper, then the client. */
static void ctl__on_signal(uv_signal_t *s, int signum) {
  ctl_t *c = s->data;
  if (c->stopping) {
    LOG_W("second signal: exiting now", "signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
    exit(1);
  }
  c->stopping = 1;
  LOG_I("shutting down", "signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
  if (c->hr) hr_reconciler_stop(c->hr, ctl__hr_stopped, c);
}

static const char ctl__usage[] =
  "Usage: rudder controller [flags]\n"
  "  --kubeconfig FILE   kubeconfig to use (default $KUBECONFIG, then in-cluster, then ~/.kube/config)\n"
  "  --context NAME      kubeconfig context (default its current-context)\n"
  "  --namespace NS      watch HelmReleases in this namespace only (default all)\n"
  "  --concurrency N     reconciles in flight at once (default 4)\n"
  "  --log-level LEVEL   debug, info, warn or error (default info)\n";

int controller_main(int argc, char **argv) {
  const char *kubeconfig = NULL, *context = NULL, *ns = NULL;
  unsigned concurrency = 4;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = NULL;
    const char *eq = strchr(a, '=');
    char flag[64];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(ctl__usage, stdout); return 0; }
    if (strncmp(a, "--", 2) != 0) { fprintf(stderr, "rudder controller: unexpected argument \"%s\"\n%s", a, ctl__usage); return 2; }
    if (eq) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
      v = eq + 1;
    } else {
      snprintf(flag, sizeof flag, "%s", a);
      if (i + 1 >= argc) { fprintf(stderr, "rudder controller: flag %s needs a value\n", a); return 2; }
      v = argv[++i];
    }
    if (!strcmp(flag, "--kubeconfig")) kubeconfig = v;
    else if (!strcmp(flag, "--context")) context = v;
    else if (!strcmp(flag, "--namespace") || !strcmp(flag, "-n")) ns = v;
    else if (!strcmp(flag, "--concurrency")) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || n < 1 || n > 10000) { fprintf(stderr, "rudder controller: --concurrency: \"%s\" is not a number from 1 to 10000\n", v); return 2; }
      concurrency = (unsigned)n;
    } else if (!strcmp(flag, "--log-level")) {
      int l = log_level_parse(v);
      if (l < 0) { fprintf(stderr, "rudder controller: --log-level: \"%s\" is not debug, info, warn or error\n", v); return 2; }
      log_set_level((log_level_t)l);
    } else { fprintf(stderr, "rudder controller: unknown flag %s\n%s", flag, ctl__usage); return 2; }
  }

  /* A write to a connection the server closed must be an error, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  ctl_t *c = calloc(1, sizeof *c);
  if (!c) { fprintf(stderr, "rudder controller: out of memory\n"); return 1; }
  char *err = NULL;
  int rc = kube_config_load(kubeconfig, context, &c->cfg, &err);
  if (rc) {
    fprintf(stderr, "rudder controller: %s\n", err ? err : uv_strerror(rc));
    free(err);
    free(c);
    return 1;
  }
  uv_loop_init(&c->loop);
  rc = kube_client_new(&c->loop, &c->cfg, &c->client, &err);
  if (rc == 0) rc = discovery_new(c->client, &c->disc);
  if (rc) {
    fprintf(stderr, "rudder controller: %s\n", err ? err : uv_strerror(rc));
    free(err);
    return 1;
  }
  uv_signal_init(&c->loop, &c->sigterm);
  uv_signal_init(&c->loop, &c->sigint);
  c->sigterm.data = c->sigint.data = c;
  uv_signal_start(&c->sigterm, ctl__on_signal, SIGTERM);
  uv_signal_start(&c->sigint, ctl__on_signal, SIGINT);

  LOG_I("rudder controller starting", "version", RUDDER_VERSION, "commit", RUDDER_GIT_COMMIT,
        "server", c->cfg.server, "namespace", ns && *ns ? ns : "(all)");
  hr_options_t o = {.namespace = ns, .concurrency = concurrency};
  rc = hr_reconciler_start(&c->loop, c->client, c->disc, &o, &c->hr);
  if (rc) {
    LOG_E("cannot start the HelmRelease reconciler", "error", uv_strerror(rc));
    c->stopping = 1;
    ctl__hr_stopped(c);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  int close_rc = uv_loop_close(&c->loop);
  if (close_rc) LOG_E("loop did not close cleanly", "error", uv_strerror(close_rc));
  kube_config_free(&c->cfg);
  free(c);
  LOG_I("rudder controller stopped");
  return rc || close_rc ? 1 : 0;
}
