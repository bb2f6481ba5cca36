/* toJson and toYaml with a helper thread (sprig_*_encode_with): the second half of a big list is
 * encoded on the helper and appended. The text, the return code and the error must be exactly the
 * sequential encoder's, for random trees with big lists at the root and nested, items that end in
 * literal blocks (the YAML emitter's state at the split then differs from the helper's guess and
 * the main thread emits the second half itself), errors (NaN) in either half (the first wins), and
 * host objects in the second half (left to the main thread). The seed is printed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/worker.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"

static unsigned long long rng;
static unsigned rnd(unsigned n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng >> 33) % n);
}

static const tpl_type_t obj_type = {"main.thing", NULL, NULL, NULL};
static int dummy;

static tpl_value_t str_value(tpl_arena_t *a) {
  static const char *const words[] = {"a", "name", "true", "yes", "0x10", "1e3", "with space", "colon: here",
                                      "- dash", "#hash", "quote\"d", "tab\there", "é ü", "", "null", "~"};
  char buf[400];
  size_t n = 0;
  unsigned parts = 1 + rnd(4);
  for (unsigned i = 0; i < parts; i++) {
    const char *w = words[rnd(sizeof words / sizeof *words)];
    size_t l = strlen(w);
    memcpy(buf + n, w, l);
    n += l;
    if (rnd(4) == 0) buf[n++] = '\n'; /* multi-line: literal blocks */
    else if (i + 1 < parts) buf[n++] = ' ';
  }
  if (rnd(6) == 0) buf[n++] = '\n'; /* ends in a line break */
  if (rnd(20) == 0) { /* long: folded */
    for (int k = 0; k < 120; k++) buf[n++] = (char)('a' + k % 26);
  }
  return tpl_value_str_copy(a, buf, n);
}

static tpl_value_t gen(tpl_arena_t *a, int depth, int nan_odds, int obj_odds);

static tpl_value_t gen_scalar(tpl_arena_t *a, int nan_odds, int obj_odds) {
  if (nan_odds && rnd((unsigned)nan_odds) == 0) return tpl_value_float(NAN);
  if (obj_odds && rnd((unsigned)obj_odds) == 0) {
    tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
    o->type = &obj_type;
    o->self = &dummy;
    return (tpl_value_t){.kind = TPL_OBJECT, .u.obj = o};
  }
  switch (rnd(6)) {
  case 0: return tpl_value_int((int64_t)rnd(100000) - 500);
  case 1: return tpl_value_float((double)rnd(1000) / 8.0);
  case 2: return tpl_value_bool(rnd(2));
  case 3: return tpl_value_nil();
  default: return str_value(a);
  }
}

static tpl_value_t gen_map(tpl_arena_t *a, int depth, int nan_odds, int obj_odds) {
  tpl_value_t m = tpl_value_map_new(a, TPL_ELEM_ANY);
  unsigned n = rnd(6);
  for (unsigned i = 0; i < n; i++) {
    char k[16];
    int kl = snprintf(k, sizeof k, "%c%u", "abkzAB_"[rnd(7)], rnd(5));
    tpl_value_t v = gen(a, depth + 1, nan_odds, obj_odds);
    v.iface = 1;
    tpl_map_set(a, m.u.map, k, (size_t)kl, v);
  }
  if (rnd(3) == 0) tpl_map_set(a, m.u.map, "zz", 2, str_value(a)); /* last key: maybe a literal block */
  return m;
}

static tpl_value_t gen_list(tpl_arena_t *a, size_t n, int depth, int nan_odds, int obj_odds) {
  tpl_value_t l = tpl_value_list_new(a, TPL_ELEM_ANY, n);
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = rnd(3) ? gen_map(a, depth + 1, nan_odds, obj_odds) : gen(a, depth + 1, nan_odds, obj_odds);
    v.iface = 1;
    tpl_list_push(a, l.u.list, v);
  }
  return l;
}

static tpl_value_t gen(tpl_arena_t *a, int depth, int nan_odds, int obj_odds) {
  if (depth > 3) return gen_scalar(a, nan_odds, obj_odds);
  switch (rnd(5)) {
  case 0: return gen_map(a, depth, nan_odds, obj_odds);
  case 1: return gen_list(a, rnd(4), depth, nan_odds, obj_odds);
  default: return gen_scalar(a, nan_odds, obj_odds);
  }
}

static int compared, split_differs;

static void compare(const tpl_value_t *v, worker_t *w, const char *what) {
  for (int json = 0; json < 3; json++) {
    buf_t o1 = BUF_INIT, o2 = BUF_INIT, e1 = BUF_INIT, e2 = BUF_INIT;
    int r1, r2;
    if (json == 0) {
      r1 = sprig_yaml_encode(&o1, v, &e1);
      r2 = sprig_yaml_encode_with(&o2, v, &e2, w);
    } else {
      const char *ind = json == 2 ? "  " : NULL;
      r1 = sprig_json_encode(&o1, v, true, ind, &e1);
      r2 = sprig_json_encode_with(&o2, v, true, ind, &e2, w);
    }
    compared++;
    if (r1 != r2 || (r1 == 0 && (o1.len != o2.len || (o1.len && memcmp(o1.data, o2.data, o1.len)))) ||
        e1.len != e2.len || (e1.len && memcmp(e1.data, e2.data, e1.len))) {
      split_differs++;
      fprintf(stderr, "FAIL %s (%s): rc %d vs %d, %zu vs %zu bytes, err \"%s\" vs \"%s\"\n", what,
              json == 0 ? "yaml" : json == 1 ? "json" : "json indent", r1, r2, o1.len, o2.len,
              e1.data ? e1.data : "", e2.data ? e2.data : "");
      if (r1 == 0 && r2 == 0)
        for (size_t i = 0; i < o1.len && i < o2.len; i++)
          if (o1.data[i] != o2.data[i]) {
            fprintf(stderr, "  first difference at byte %zu: ...%.60s... vs ...%.60s...\n", i,
                    o1.data + (i > 30 ? i - 30 : 0), o2.data + (i > 30 ? i - 30 : 0));
            break;
          }
    }
    buf_free(&o1);
    buf_free(&o2);
    buf_free(&e1);
    buf_free(&e2);
  }
}

int main(void) {
  unsigned long long seed = (unsigned long long)time(NULL);
  const char *s = getenv("RUDDER_TEST_SEED");
  if (s) seed = strtoull(s, NULL, 10);
  printf("seed %llu (RUDDER_TEST_SEED to repeat)\n", seed);
  rng = seed;
  worker_t *w = worker_start(); /* NULL with one CPU: then both sides encode in order */
  for (int round = 0; round < 60; round++) {
    tpl_arena_t *a = tpl_arena_new(0);
    int nan_odds = round % 3 == 1 ? 4000 : 0, obj_odds = round % 5 == 2 ? 3000 : 0;
    size_t n = 256 + rnd(3000);
    tpl_value_t root = gen_list(a, n, 0, nan_odds, obj_odds);
    compare(&root, w, "root list");
    tpl_value_t m = tpl_value_map_new(a, TPL_ELEM_ANY); /* a big list under a key, beside others */
    tpl_map_set(a, m.u.map, "items", 5, root);
    tpl_map_set(a, m.u.map, "after", 5, str_value(a));
    tpl_map_set(a, m.u.map, "before", 6, gen_map(a, 1, 0, 0));
    compare(&m, w, "list in a map");
    tpl_value_t nums = tpl_value_list_new(a, TPL_ELEM_ANY, 9000); /* scalars: split past 8192 */
    for (int i = 0; i < 9000; i++) tpl_list_push(a, nums.u.list, i == 8500 && nan_odds ? tpl_value_float(NAN) : gen_scalar(a, 0, 0));
    compare(&nums, w, "long scalar list");
    tpl_arena_free(a);
  }
  worker_stop(w);
  printf("%d encodings compared, %d differ\n", compared, split_differs);
  CHECK(split_differs == 0);
  return t_done();
}
