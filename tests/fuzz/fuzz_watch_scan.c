/* libFuzzer target for the watch module's tolerant readers: the streaming JSON structure scanner
 * (watch/jscan.c) fed whole and in two pieces must agree, and the watch event decoder in skip mode
 * (watch/ndjson.c with a bad-event callback and a small line bound) must never fail the stream on
 * bad input; and the decoder with managedFields left out (watch_ndjson_drop_managed_fields) must
 * deliver the same events as without, each object the same but for object.metadata.managedFields
 * (gone, or kept where the quick scan did not follow the text), and end the same way when the
 * stream was good (a stream that was bad only inside a skipped managedFields may go on further).
 * Any crash, sanitizer report, leak or disagreement is a bug.
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

/* Every event's object as printed, with (strip) metadata.managedFields deleted first. */
typedef struct printed_s {
  char *text;
  size_t len;
  int strip;
} printed_t;

static void printed_add(printed_t *pr, cJSON *obj) {
  if (pr->strip) cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
  char *t = cJSON_PrintUnformatted(obj);
  size_t n = t ? strlen(t) : 0;
  char *g = realloc(pr->text, pr->len + n + 2);
  if (!g) abort();
  pr->text = g;
  memcpy(pr->text + pr->len, t ? t : "", n);
  pr->len += n;
  pr->text[pr->len++] = '\n';
  pr->text[pr->len] = 0;
  free(t);
}

static int on_print(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) {
  printed_add(data, obj);
  return 0;
}

/* Decodes the input (no bad callback: the first bad event ends it) into *pr; returns the code. */
static int decode(const char *p, size_t n, int drop, printed_t *pr) {
  watch_ndjson_t nd;
  watch_ndjson_init(&nd, 1 << 20, on_print, pr);
  watch_ndjson_drop_managed_fields(&nd, drop);
  int r = watch_ndjson_feed(&nd, p, n);
  watch_ndjson_free(&nd);
  return r;
}

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

  /* Whole (managedFields deleted after the parse) and cut before the parse agree; where the scan
   * gave up, the cut decoder's object still holds it: compared whole then. */
  printed_t whole = {.strip = 1}, kept = {.strip = 0}, dropped = {.strip = 0};
  int r1 = decode(p, size, 0, &whole), r2 = decode(p, size, 0, &kept), r3 = decode(p, size, 1, &dropped);
  if (r2 != r1 || (!r1 && r3)) abort();
  /* Line by line: each of whole's events is the dropped decoder's same one (or kept's, where the
   * scan gave up); the dropped decoder has more only when the whole stream failed. */
  const char *a = whole.text ? whole.text : "", *b = kept.text ? kept.text : "", *c = dropped.text ? dropped.text : "";
  while (*a) {
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n"), lc = strcspn(c, "\n");
    if (!*c || !((la == lc && !memcmp(a, c, lc)) || (lb == lc && !memcmp(b, c, lc)))) abort();
    a += la + (a[la] != 0), b += lb + (b[lb] != 0), c += lc + (c[lc] != 0);
  }
  if (*c && !r1) abort();
  free(whole.text), free(kept.text), free(dropped.text);
  return 0;
}
