/* Watch event decoding: events/s and MB/s for a ~3 KiB Deployment-like object, through the
 * client's own path (llhttp de-chunking in watch/http1.c, then the NDJSON decoder in
 * watch/ndjson.c, which parses each event with cJSON and hands out type and object), against a
 * plain baseline on the same NDJSON bytes: split at '\n', cJSON_Parse each line, look up "type"
 * and "object". Also the decoder with metadata.managedFields left out before each parse
 * (watch_ndjson_drop_managed_fields, as the readiness watch decodes).
 *
 * The stream is what kube-apiserver sends: a chunked HTTP/1.1 response with one chunk per
 * event; it is fed in 16 KiB pieces, as reads arrive. In memory, no I/O, no TLS.
 * Usage: watch_decode [events]   (default 20000). Prints `name value unit` lines. */
#include "base/buf.h"
#include "watch/http1.h"
#include "watch/ndjson.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static size_t seen, checksum;

static int on_event(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) {
  seen++;
  checksum += (size_t)type[0];
  return 0;
}

static int on_body(watch_http_t *h, const char *p, size_t n) { return watch_ndjson_feed(h->data, p, n); }

/* One event line: a Deployment with labels, annotations, a pod template with two containers. */
static void make_event2(buf_t *b, size_t i, int two);
static void make_event(buf_t *b, size_t i) { make_event2(b, i, 0); }

/* two: with the controller manager's status entry in managedFields as well, as a Deployment the
 * Deployment controller has written status for carries it (the readiness watch's events). */
static void make_event2(buf_t *b, size_t i, int two) {
  buf_printf(b, "{\"type\":\"%s\",\"object\":{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{"
                "\"name\":\"web-%zu\",\"namespace\":\"team-%zu\",\"uid\":\"6f1c2a9e-%04zx-4d2b-9b61-0a3c5e7f%04zx\","
                "\"resourceVersion\":\"%zu\",\"generation\":%zu,\"creationTimestamp\":\"2025-01-02T03:04:05Z\","
                "\"labels\":{\"app.kubernetes.io/name\":\"web\",\"app.kubernetes.io/instance\":\"web-%zu\","
                "\"app.kubernetes.io/managed-by\":\"Helm\",\"helm.sh/chart\":\"web-1.2.3\",\"rudder.dev/release\":\"web-%zu\"},"
                "\"annotations\":{\"meta.helm.sh/release-name\":\"web-%zu\",\"meta.helm.sh/release-namespace\":\"team-%zu\","
                "\"deployment.kubernetes.io/revision\":\"3\"},"
                "\"managedFields\":[{\"manager\":\"rudder\",\"operation\":\"Apply\",\"apiVersion\":\"apps/v1\","
                "\"time\":\"2025-01-02T03:04:05Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{"
                "\"f:app.kubernetes.io/name\":{},\"f:app.kubernetes.io/instance\":{}}},\"f:spec\":{\"f:replicas\":{},"
                "\"f:selector\":{},\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},"
                "\"f:image\":{},\"f:name\":{}}}}}}}}%s]},"
                "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app.kubernetes.io/name\":\"web\","
                "\"app.kubernetes.io/instance\":\"web-%zu\"}},\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
                "{\"maxUnavailable\":\"25%%\",\"maxSurge\":\"25%%\"}},\"template\":{\"metadata\":{\"labels\":{"
                "\"app.kubernetes.io/name\":\"web\",\"app.kubernetes.io/instance\":\"web-%zu\"}},\"spec\":{\"containers\":["
                "{\"name\":\"web\",\"image\":\"registry.example.com/team/web:1.2.3\",\"ports\":[{\"name\":\"http\","
                "\"containerPort\":8080,\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},"
                "{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}}],"
                "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"100m\","
                "\"memory\":\"128Mi\"}},\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":\"http\","
                "\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
                "\"readinessProbe\":{\"httpGet\":{\"path\":\"/readyz\",\"port\":\"http\",\"scheme\":\"HTTP\"},"
                "\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
                "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
                "\"imagePullPolicy\":\"IfNotPresent\"},{\"name\":\"sidecar\",\"image\":\"registry.example.com/proxy:2.0.1\","
                "\"args\":[\"--listen=:15001\",\"--upstream=127.0.0.1:8080\"],\"resources\":{\"requests\":{\"cpu\":\"10m\","
                "\"memory\":\"32Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":"
                "\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
                "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"web\",\"securityContext\":{\"runAsNonRoot\":true},"
                "\"schedulerName\":\"default-scheduler\"}},\"revisionHistoryLimit\":10,\"progressDeadlineSeconds\":600},"
                "\"status\":{\"observedGeneration\":%zu,\"replicas\":3,\"updatedReplicas\":3,\"readyReplicas\":3,"
                "\"availableReplicas\":3,\"conditions\":[{\"type\":\"Available\",\"status\":\"True\",\"lastUpdateTime\":"
                "\"2025-01-02T03:04:15Z\",\"lastTransitionTime\":\"2025-01-02T03:04:15Z\",\"reason\":"
                "\"MinimumReplicasAvailable\",\"message\":\"Deployment has minimum availability.\"},{\"type\":\"Progressing\","
                "\"status\":\"True\",\"lastUpdateTime\":\"2025-01-02T03:04:15Z\",\"lastTransitionTime\":\"2025-01-02T03:04:05Z\","
                "\"reason\":\"NewReplicaSetAvailable\",\"message\":\"ReplicaSet \\\"web-%zu-5d8f7c9b6\\\" has successfully "
                "progressed.\"}]}}}\n",
             i % 3 ? "MODIFIED" : "ADDED", i, i % 50, i & 0xffff, i & 0xffff, 1000 + i, i % 7 + 1, i, i, i, i % 50,
             two ? ",{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                   "\"time\":\"2025-01-02T03:04:15Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
                   "{\"f:annotations\":{\".\":{},\"f:deployment.kubernetes.io/revision\":{}}},\"f:status\":"
                   "{\"f:availableReplicas\":{},\"f:conditions\":{\".\":{},\"k:{\\\"type\\\":\\\"Available\\\"}\":"
                   "{\".\":{},\"f:lastTransitionTime\":{},\"f:lastUpdateTime\":{},\"f:message\":{},\"f:reason\":{},"
                   "\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"Progressing\\\"}\":{\".\":{},"
                   "\"f:lastTransitionTime\":{},\"f:lastUpdateTime\":{},\"f:message\":{},\"f:reason\":{},"
                   "\"f:status\":{},\"f:type\":{}}},\"f:observedGeneration\":{},\"f:readyReplicas\":{},"
                   "\"f:replicas\":{},\"f:updatedReplicas\":{}}},\"subresource\":\"status\"}"
                 : "",
             i, i, i % 7 + 1, i);
}

enum { PIECE = 16384, ROUNDS = 5 };

/* Nanoseconds for the NDJSON decoder alone over the n events of text, fed in PIECE-byte pieces,
 * with drop: managedFields left out; -1 when it did not deliver them all. */
static double ndjson_ns(const buf_t *text, size_t n, int drop) {
  watch_ndjson_t dec;
  watch_ndjson_init(&dec, 0, on_event, NULL);
  watch_ndjson_drop_managed_fields(&dec, drop);
  seen = 0;
  uint64_t t0 = uv_hrtime();
  for (size_t off = 0; off < text->len; off += PIECE)
    if (watch_ndjson_feed(&dec, text->data + off, text->len - off < PIECE ? text->len - off : PIECE)) break;
  double t = (double)(uv_hrtime() - t0);
  watch_ndjson_free(&dec);
  return seen == n ? t : -1;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
  buf_t nd = BUF_INIT, http = BUF_INIT, ev = BUF_INIT;
  buf_puts(&http, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  for (size_t i = 0; i < n; i++) {
    buf_reset(&ev);
    make_event(&ev, i);
    buf_append(&nd, ev.data, ev.len);
    buf_printf(&http, "%zx\r\n", ev.len);
    buf_append(&http, ev.data, ev.len);
    buf_puts(&http, "\r\n");
  }
  buf_puts(&http, "0\r\n\r\n");
  double mb = (double)nd.len / 1e6;
  printf("watch_decode_events %zu events\n", n);
  printf("watch_decode_event_size %.0f bytes\n", (double)nd.len / n);

  double best_ours = 1e30, best_nd = 1e30, best_drop = 1e30, best_base = 1e30;
  for (int round = 0; round < ROUNDS; round++) {
    /* Ours: the HTTP layer and the NDJSON decoder, fed in 16 KiB pieces. */
    watch_ndjson_t dec;
    watch_ndjson_init(&dec, 0, on_event, NULL);
    watch_http_t h;
    watch_http_init(&h);
    h.on_body = on_body;
    h.data = &dec;
    seen = 0;
    uint64_t t0 = uv_hrtime();
    for (size_t off = 0; off < http.len;) {
      size_t k = http.len - off < PIECE ? http.len - off : PIECE, used = 0;
      int r = watch_http_feed(&h, http.data + off, k, &used);
      if (r < 0) { fprintf(stderr, "decode failed: %d %s\n", r, dec.err); return 1; }
      off += k;
      if (r == 1) break;
    }
    double t = (double)(uv_hrtime() - t0);
    if (seen != n) { fprintf(stderr, "decoded %zu of %zu\n", seen, n); return 1; }
    if (t < best_ours) best_ours = t;
    watch_http_free(&h);
    watch_ndjson_free(&dec);

    /* The NDJSON decoder alone on the de-chunked bytes, in the same pieces; then the same with
     * metadata.managedFields left out before each parse (the readiness watch's way). */
    if ((t = ndjson_ns(&nd, n, 0)) < 0) return 1;
    if (t < best_nd) best_nd = t;
    if ((t = ndjson_ns(&nd, n, 1)) < 0) return 1;
    if (t < best_drop) best_drop = t;

    /* Baseline: cJSON_Parse per line of the whole NDJSON text. */
    seen = 0;
    t0 = uv_hrtime();
    for (const char *p = nd.data, *end = nd.data + nd.len; p < end;) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      cJSON *j = cJSON_ParseWithLength(p, (size_t)(nl - p));
      const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
      const cJSON *obj = cJSON_GetObjectItemCaseSensitive(j, "object");
      if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) return 1;
      seen++;
      checksum += (size_t)type->valuestring[0];
      cJSON_Delete(j);
      p = nl + 1;
    }
    t = (double)(uv_hrtime() - t0);
    if (seen != n) return 1;
    if (t < best_base) best_base = t;
  }
  printf("watch_decode_client_events_per_s %.0f events/s\n", n / (best_ours / 1e9));
  printf("watch_decode_client_mb_per_s %.1f MB/s\n", mb / (best_ours / 1e9));
  printf("watch_decode_ndjson_only_events_per_s %.0f events/s\n", n / (best_nd / 1e9));
  printf("watch_decode_ndjson_only_mb_per_s %.1f MB/s\n", mb / (best_nd / 1e9));
  printf("watch_decode_ndjson_no_managed_fields_events_per_s %.0f events/s\n", n / (best_drop / 1e9));
  printf("watch_decode_ndjson_no_managed_fields_vs_whole %.2f ratio\n", best_nd / best_drop);
  printf("watch_decode_baseline_cjson_events_per_s %.0f events/s\n", n / (best_base / 1e9));
  printf("watch_decode_baseline_cjson_mb_per_s %.1f MB/s\n", mb / (best_base / 1e9));
  printf("watch_decode_client_vs_baseline %.2f ratio\n", best_base / best_ours);

  /* The event with two managers' entries: the NDJSON decoder whole and with managedFields left out. */
  buf_t nd2 = BUF_INIT;
  for (size_t i = 0; i < n; i++) {
    buf_reset(&ev);
    make_event2(&ev, i, 1);
    buf_append(&nd2, ev.data, ev.len);
  }
  double best2[2] = {1e30, 1e30};
  for (int round = 0; round < ROUNDS; round++)
    for (int drop = 0; drop < 2; drop++) {
      double t = ndjson_ns(&nd2, n, drop);
      if (t < 0) return 1;
      if (t < best2[drop]) best2[drop] = t;
    }
  printf("watch_decode_two_managers_event_size %.0f bytes\n", (double)nd2.len / n);
  printf("watch_decode_two_managers_ndjson_events_per_s %.0f events/s\n", n / (best2[0] / 1e9));
  printf("watch_decode_two_managers_no_managed_fields_events_per_s %.0f events/s\n", n / (best2[1] / 1e9));
  printf("watch_decode_two_managers_no_managed_fields_vs_whole %.2f ratio\n", best2[0] / best2[1]);
  buf_free(&nd2);
  buf_free(&nd);
  buf_free(&http);
  buf_free(&ev);
  return checksum ? 0 : 1;
}
