/* Other clusters releases can be installed into: one kubeconfig per cluster, held in a Secret of the
 * controller's chart-repository namespace (--chartrepo-namespace) labelled
 * `rudder.dev/cluster: <name>`, the kubeconfig under the key `kubeconfig`. A kubeconfig from a Secret
 * may carry inline credentials only (kube_config_parse: no file references, no exec plugins).
 *
 * A client and a REST mapper per cluster are made when a release first needs them and kept while
 * the Secret is unchanged; a changed or deleted Secret retires them (closed once no reconcile holds
 * them). Listeners hear of every cluster added, changed or removed, so that releases installed
 * "to all clusters" reach a cluster added later. */
#pragma once
#include <stdbool.h>
#include <uv.h>
#include "base/buf.h"
#include "helm/action/action.h"
#include "watch/client.h"

#define CLUSTERS_LABEL "rudder.dev/cluster"
#define CLUSTERS_KEY "kubeconfig"

typedef struct clusters_s clusters_t;
typedef struct cluster_s cluster_t;

/* Watches the cluster Secrets of namespace ns with client c (the caller's, outliving it); applies are
 * made with field_manager. 0 or a negative code. */
int clusters_start(uv_loop_t *loop, kube_client_t *c, const char *ns, const char *field_manager, clusters_t **out);
/* Lets kubeconfigs from Secrets name exec credential plugins, which are then run as for the main
 * cluster (--insecure-kubeconfig-exec; off by default: a Secret's writer would choose a command). */
void clusters_allow_exec(clusters_t *cs, bool allow);
/* True once the first list of Secrets has been seen. */
bool clusters_synced(const clusters_t *cs);
/* Calls cb(data) whenever a cluster is added, changed or removed. 0 or UV_ENOMEM. */
int clusters_listen(clusters_t *cs, void (*cb)(void *data), void *data);
void clusters_unlisten(clusters_t *cs, void (*cb)(void *data), void *data);
/* The names of every cluster known now, each followed by '\n', appended to out. */
void clusters_names(const clusters_t *cs, buf_t *out);
/* Cluster `name` with a reference held (release it with cluster_unref), its client made when first
 * asked; NULL with err saying why (no such Secret, an unreadable kubeconfig, out of memory). */
cluster_t *clusters_get(clusters_t *cs, const char *name, buf_t *err);
/* A cluster from kubeconfig text read elsewhere (a release's own kubeconfig Secret): `name` identifies
 * it, `version` (the Secret's resourceVersion) tells when it changed; `what` names the text in
 * messages. A reference held, or NULL with err. */
cluster_t *clusters_get_text(clusters_t *cs, const char *name, const char *version, const char *text, size_t len,
                             const char *what, buf_t *err);
void cluster_unref(cluster_t *cl);
/* Another reference to cl (for a holder that outlives the one who got it). */
cluster_t *cluster_ref(cluster_t *cl);
/* What the actions use for that cluster (client, REST mapper, field manager). */
const act_env_t *cluster_env(const cluster_t *cl);
const char *cluster_name(const cluster_t *cl);
/* The server's gitVersion once someone has asked it (NULL before); set it with cluster_set_version. */
const char *cluster_version(const cluster_t *cl);
void cluster_set_version(cluster_t *cl, const char *v);
/* Stops watching, retires every cluster (each closed when its last reference goes), then calls cb. */
void clusters_stop(clusters_t *cs, void (*cb)(void *data), void *data);
