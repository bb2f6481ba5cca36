/* rudder reconcile / suspend / resume: a merge patch of the HelmRelease, then (reconcile, resume) a
 * watch of that one object until its status says the controller handled the request. */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include "reconcile/request.h"
#include "watch/informer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char cmd_reconcile__usage[] =
  "Usage: rudder reconcile NAME [-n NS] [--timeout 5m] [--kubeconfig FILE] [--context NAME]\n"
  "  Asks the controller to reconcile the HelmRelease now, bypassing what it remembers, and waits until\n"
  "  its status says it was handled (status.lastHandledReconcileAt); prints the outcome. Exit 0 when\n"
  "  Ready, 1 when not (or on timeout). kubectl equivalent:\n"
  "  kubectl annotate helmrelease NAME -n NS --overwrite " REQ_RECONCILE_ANNOTATION "=\"$(date -Ins)\"\n";

static const char cmd_suspend__usage[] =
  "Usage: rudder suspend NAME [-n NS] [--kubeconfig FILE] [--context NAME]\n"
  "  Sets spec.suspend: the controller leaves the release alone (no upgrade, no drift correction)\n"
  "  until it is resumed. kubectl equivalent:\n"
  "  kubectl patch helmrelease NAME -n NS --type merge -p '{\"spec\":{\"suspend\":true}}'\n";

static const char cmd_resume__usage[] =
  "Usage: rudder resume NAME [-n NS] [--timeout 5m] [--kubeconfig FILE] [--context NAME]\n"
  "  Clears spec.suspend and asks for a reconcile now, then waits for its outcome as rudder reconcile\n"
  "  does. kubectl equivalent: kubectl patch helmrelease NAME -n NS --type merge -p\n"
  "  '{\"spec\":{\"suspend\":false},\"metadata\":{\"annotations\":{\"" REQ_RECONCILE_ANNOTATION "\":\"'\"$(date -Ins)\"'\"}}}'\n";

typedef struct rcw_s {
  cmd_t *c;
  const char *asked;
  uv_timer_t timer;
  informer_t *inf;
  int done, rc, closing;
  int pending; /* the informer and the timer, until both are closed */
} rcw_t;

static void rcw__released(rcw_t *w) {
  if (--w->pending == 0) w->done = 1;
}

static void rcw__timer_closed(uv_handle_t *h) { rcw__released(h->data); }
static void rcw__inf_stopped(void *data) { rcw__released(data); }

static void rcw__shutdown(uv_timer_t *t) {
  rcw_t *w = t->data;
  uv_close((uv_handle_t *)&w->timer, rcw__timer_closed);
  informer_stop(w->inf, rcw__inf_stopped, w);
}

/* The informer is stopped from the timer, not from inside its own handler. */
static void rcw__finish(rcw_t *w, int rc) {
  if (w->closing) return;
  w->closing = 1;
  w->rc = rc;
  uv_timer_start(&w->timer, rcw__shutdown, 0, 0);
}

/* The object as the watch has it: done once its status names our request. */
static void rcw__look(rcw_t *w, const cJSON *obj) {
  if (w->closing) return;
  const char *handled = cmd_str(obj, "status.lastHandledReconcileAt");
  if (!handled || strcmp(handled, w->asked)) return;
  const char *ready = cmd_ready(obj, "status"), *reason = cmd_ready(obj, "reason"), *msg = cmd_ready(obj, "message");
  const cJSON *rev = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "lastAppliedRevision");
  printf("HelmRelease %s/%s reconciled: Ready=%s", w->c->ns, w->c->arg, ready ? ready : "Unknown");
  if (reason) printf(" (%s)", reason);
  if (cJSON_IsNumber(rev)) printf(", revision %lld", (long long)rev->valuedouble);
  printf("%s%s\n", msg ? ": " : "", msg ? msg : "");
  rcw__finish(w, ready && !strcmp(ready, "True") ? 0 : 1);
}

static void rcw__add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf, (void)key;
  rcw__look(data, obj);
}

static void rcw__update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  (void)inf, (void)key, (void)old;
  rcw__look(data, obj);
}

static void rcw__delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf, (void)obj;
  rcw_t *w = data;
  if (w->closing) return;
  fprintf(stderr, "%s: HelmRelease %s was deleted while waiting\n", w->c->name, key);
  rcw__finish(w, 1);
}

static void rcw__timeout(uv_timer_t *t) {
  rcw_t *w = t->data;
  if (w->closing) return;
  fprintf(stderr,
          "%s: timed out after %llus: HelmRelease %s/%s does not say it handled the request (%s=%s); is a rudder "
          "controller running that serves this namespace (and, with shards, this object's labels)?\n",
          w->c->name, (unsigned long long)(w->c->timeout_ms / 1000), w->c->ns, w->c->arg, REQ_RECONCILE_ANNOTATION,
          w->asked);
  rcw__finish(w, 1);
}

/* Watches the one HelmRelease until its status names `asked` as handled, or the timeout. */
static int rcw__wait(cmd_t *c, const char *asked) {
  rcw_t w = {.c = c, .asked = asked, .pending = 2};
  buf_t path = BUF_INIT, sel = BUF_INIT;
  cmd_hr_path(&path, c->ns, NULL, NULL);
  buf_printf(&sel, "metadata.name=%s", c->arg);
  informer_opts_t io = {.path = path.data, .field_selector = sel.data, .backoff_max_ms = 2000};
  informer_handlers_t h = {.on_add = rcw__add, .on_update = rcw__update, .on_delete = rcw__delete, .data = &w};
  int rc = path.data && sel.data ? informer_start(c->client, &io, &h, &w.inf) : UV_ENOMEM;
  buf_free(&path);
  buf_free(&sel);
  if (rc) {
    fprintf(stderr, "%s: cannot watch HelmRelease %s/%s: %s\n", c->name, c->ns, c->arg, uv_strerror(rc));
    return 1;
  }
  uv_timer_init(&c->loop, &w.timer);
  w.timer.data = &w;
  uv_timer_start(&w.timer, rcw__timeout, c->timeout_ms, 0);
  fprintf(stderr, "waiting for the controller to reconcile HelmRelease %s/%s (%s=%s)\n", c->ns, c->arg,
          REQ_RECONCILE_ANNOTATION, asked);
  while (!w.done && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  return w.rc;
}

/* A merge patch of the HelmRelease; 0 or 1 after printing why. */
static int cmd__patch(cmd_t *c, const char *body) {
  buf_t path = BUF_INIT, what = BUF_INIT;
  cmd_hr_path(&path, c->ns, c->arg, NULL);
  buf_printf(&what, "HelmRelease %s/%s", c->ns, c->arg);
  cmd_resp_t r;
  cmd_do(c, &(kube_req_opts_t){.method = "PATCH", .path = path.data, .content_type = "application/merge-patch+json",
                               .body = body, .body_len = strlen(body), .retry = KUBE_RETRY_NEVER},
         &r);
  int rc = r.err || r.status >= 300 ? cmd_fail(c, &r, what.data) : 0;
  cmd_resp_free(&r);
  buf_free(&path);
  buf_free(&what);
  return rc;
}

/* Now as RFC 3339 with nanoseconds, UTC: a value never used before. */
static void cmd__now(char out[40]) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char day[24];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, 40, "%s.%09ldZ", day, ts.tv_nsec);
}

/* The patch asking for a reconcile at `at` (and, for resume, clearing spec.suspend). */
static char *cmd__ask_body(const char *at, int resume) {
  cJSON *p = cJSON_CreateObject();
  cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "metadata"), "annotations");
  if (resume) cJSON_AddFalseToObject(cJSON_AddObjectToObject(p, "spec"), "suspend");
  char *body = ann && cJSON_AddStringToObject(ann, REQ_RECONCILE_ANNOTATION, at) ? cJSON_PrintUnformatted(p) : NULL;
  cJSON_Delete(p);
  return body;
}

static int cmd__ask(cmd_t *c, int resume) {
  char at[40];
  cmd__now(at);
  char *body = cmd__ask_body(at, resume);
  if (!body) {
    fprintf(stderr, "%s: out of memory\n", c->name);
    return 1;
  }
  int rc = cmd__patch(c, body);
  free(body);
  if (!rc && resume) fprintf(stderr, "HelmRelease %s/%s resumed\n", c->ns, c->arg);
  return rc ? rc : rcw__wait(c, at);
}

int cmd_reconcile_main(int argc, char **argv) {
  cmd_t c = {.name = "rudder reconcile"};
  bool help;
  int rc = cmd_parse(&c, argc, argv, CMD_NAME_REQUIRED, cmd_reconcile__usage, NULL, NULL, &help);
  if (rc) return help ? 0 : rc;
  if ((rc = cmd_open(&c))) return rc;
  cJSON *obj = NULL;
  if (!(rc = cmd_get_release(&c, &obj))) {
    const cJSON *susp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "suspend");
    if (cJSON_IsTrue(susp)) {
      /* The controller does not look at a suspended release: there would be no answer to wait for. */
      fprintf(stderr, "rudder reconcile: HelmRelease %s/%s is suspended; resume it first (rudder resume %s -n %s)\n",
              c.ns, c.arg, c.arg, c.ns);
      rc = 1;
    } else {
      rc = cmd__ask(&c, 0);
    }
  }
  cJSON_Delete(obj);
  cmd_close(&c);
  return rc;
}

int cmd_suspend_main(int argc, char **argv, int suspend) {
  cmd_t c = {.name = suspend ? "rudder suspend" : "rudder resume"};
  bool help;
  int rc = cmd_parse(&c, argc, argv, CMD_NAME_REQUIRED, suspend ? cmd_suspend__usage : cmd_resume__usage, NULL, NULL,
                     &help);
  if (rc) return help ? 0 : rc;
  if ((rc = cmd_open(&c))) return rc;
  if (suspend) {
    rc = cmd__patch(&c, "{\"spec\":{\"suspend\":true}}");
    if (!rc) printf("HelmRelease %s/%s suspended\n", c.ns, c.arg);
  } else {
    rc = cmd__ask(&c, 1);
  }
  cmd_close(&c);
  return rc;
}
