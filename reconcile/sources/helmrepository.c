/* The HelmRepository kind (see helmrepository.h): its row of the repository kinds (repokind.h). */
#include "reconcile/sources/helmrepository.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "reconcile/sources/repokind.h"

static char *hrp__dup(const char *s) { return s ? strdup(s) : NULL; }

static const char *hrp__ref_name(const cJSON *spec, const char *field, int *bad) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(spec, field);
  if (!r) return NULL;
  const char *n = repo_str(r, "name");
  if (!n || !*n) *bad = 1;
  return n;
}

static int hrp__parse(repo_run_t *x, const cJSON *spec) {
  const char *url = repo_str(spec, "url");
  x->url = hrp__dup(url);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend"))) {
    LOG_I("repository suspended", "repository", x->key);
    repo_run_end(x, REPO_FORGET);
    return -1;
  }
  if (repo_run_durations(x, spec)) return -1;
  char msg[512];
  if (!url || !*url) {
    repo_run_fail(x, "InvalidSpec", "spec.url is required", REPO_FORGET);
    return -1;
  }
  x->oci = !strncmp(url, "oci://", 6);
  x->plain_http = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "insecure"));
  if (x->plain_http && !x->oci) {
    repo_run_fail(x, "InvalidSpec", "spec.insecure (plain HTTP to a registry) is for oci:// repositories only",
                  REPO_FORGET);
    return -1;
  }
  if (!x->oci && strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
    snprintf(msg, sizeof msg, "spec.url: \"%s\" must start with https://, http:// or oci://", url);
    repo_run_fail(x, "InvalidSpec", msg, REPO_FORGET);
    return -1;
  }
  x->pass_credentials = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "passCredentials"));
  x->insecure = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "insecureSkipTLSVerify"));
  int bad = 0;
  x->secret = hrp__dup(hrp__ref_name(spec, "secretRef", &bad));
  x->cert_secret = hrp__dup(hrp__ref_name(spec, "certSecretRef", &bad));
  x->ca_cm = hrp__dup(hrp__ref_name(spec, "caConfigMapRef", &bad));
  if (bad) {
    repo_run_fail(x, "InvalidSpec", "spec.secretRef, certSecretRef and caConfigMapRef need a name", REPO_FORGET);
    return -1;
  }
  return 0;
}

/* The URL, and what the index holds: its digest, fetch time, chart and version counts. */
static void hrp__status(repo_run_t *x, cJSON *st, const char *ready, const char *reason,
                        const source_index_info_t *info) {
  (void)ready, (void)reason;
  if (x->url) cJSON_AddStringToObject(st, "url", x->url);
  repo_status_index(st, info);
}

static const char *const hrp__keep[] = {"spec", "status.conditions", NULL};

static const repokind_t hrp__kind = {
    .group = "rudder.dev",
    .version = "v1alpha1",
    .resource = "helmrepositories",
    .kind = "HelmRepository",
    .key_prefix = "",
    .keep = hrp__keep,
    .default_interval_ms = 10 * 60 * 1000L,
    .parse = hrp__parse,
    .status = hrp__status,
};

int repoctl_start(uv_loop_t *loop, kube_client_t *c, source_t *s, const repoctl_opts_t *o, repoctl_t **out) {
  return repokind_start(&hrp__kind, NULL, loop, c, s, o, out);
}

int repoctl_declare(kube_client_t *c, source_t *s, const cJSON *obj,
                    void (*cb)(int err, const char *reason, const char *msg, void *data), void *data) {
  return repokind_declare(&hrp__kind, c, s, obj, cb, data);
}

void repoctl_stop(repoctl_t *r, void (*cb)(void *data), void *data) { repokind_stop(r, cb, data); }
