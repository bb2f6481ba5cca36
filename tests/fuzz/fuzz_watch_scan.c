/* libFuzzer target for the watch module's tolerant readers: the streaming JSON structure scanner
 * (watch/jscan.c) fed whole and in two pieces must agree, and the watch event decoder in skip mode
 * (watch/ndjson.c with a bad-event callback and a small line bound) must never fail the stream on
 * bad input. Any crash, sanitizer report, leak or disagreement is a bug.
 * Build and run: tests/fuzz/fuzz_watch_scan.sh (clang + libFuzzer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "watch/jscan.h"
#include "watch/ndjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t elems;
static void on_elem(watch_jscan_t *s, int end, const char *at) { elems += end ? 1 : 0; }
static void on_string(watch_jscan_t *s, const char *v, size_t n) {
  watch_objmeta_t m;
  memset(&m, 0, sizeof m);
  static const char *const pre[] = {"items", NULL};
  watch_objmeta_take(&m, s, 2, pre, v, n);
}
static int on_event(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) { return 0; }
static int on_bad(watch_ndjson_t *nd, const watch_objmeta_t *m, const char *why, void *data) { return 0; }

static void scan(const char *p, size_t n, size_t cut, size_t *depth, int *err, int *done, size_t *nel) {
  watch_jscan_t s;
  watch_jscan_init(&s);
  s.on_elem = on_elem;
  s.on_string = on_string;
  elems = 0;
  watch_jscan_feed(&s, p, cut);
  watch_jscan_feed(&s, p + cut, n - cut);
  *depth = s.max_depth;
  *err = s.err;
  *done = watch_jscan_done(&s);
  *nel = elems;
  watch_jscan_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data;
  size_t cut = size ? data[0] % (size + 1) : 0;
  size_t d1, d2, e1, e2;
  int err1, err2, done1, done2;
  scan(p, size, size, &d1, &err1, &done1, &e1);
  scan(p, size, cut, &d2, &err2, &done2, &e2);
  if (err1 != err2 || (!err1 && (d1 != d2 || done1 != done2 || e1 != e2))) abort();
  watch_ndjson_t nd;
  watch_ndjson_init(&nd, 256, on_event, NULL);
  nd.bad = on_bad;
  int r = watch_ndjson_feed(&nd, p, cut);
  if (!r) r = watch_ndjson_feed(&nd, p + cut, size - cut);
  watch_ndjson_free(&nd);
  if (r) abort(); /* in skip mode only out of memory may end the stream */
  return 0;
}
