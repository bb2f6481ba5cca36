#include "base/yaml.h"
#include "base/buf.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "t.h"

/* Converts YAML and prints it compactly with cJSON (object keys in document order). */
static char *conv(const char *y, int flags) {
  yaml_opts_t o = {.flags = flags};
  cJSON *j = NULL;
  yaml_error_t e;
  int rc = yaml_to_json(y, strlen(y), &o, &j, &e);
  if (rc) {
    char *m = malloc(600);
    snprintf(m, 600, "ERR(%d) %s", rc, e.message);
    return m;
  }
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

#define CONV(y, want) do { char *_s = conv(y, 0); CHECK_EQ_STR(_s, want); free(_s); } while (0)
#define CONVF(y, f, want) do { char *_s = conv(y, f); CHECK_EQ_STR(_s, want); free(_s); } while (0)

static void check_split(const char *text, int n, const char *const *want) {
  yaml_span_t *sp;
  size_t ns;
  CHECK_EQ_INT(yaml_split_manifests(text, strlen(text), &sp, &ns), 0);
  CHECK_EQ_INT(ns, n);
  for (int i = 0; i < n && i < (int)ns; i++) {
    char *d = strndup(text + sp[i].offset, sp[i].len);
    CHECK_EQ_STR(d, want[i]);
    free(d);
  }
  free(sp);
}

static void split_tests(void) {
  const char *w1[] = {"a: 1\n", "b: 2\n"};
  check_split("a: 1\n---\nb: 2\n", 2, w1);
  /* leading separator, blank docs and trailing spaces after --- */
  check_split("\n\n---\na: 1\n---   \n\n---\t\n  \nb: 2\n---\n", 2, w1);
  /* content on the separator line stays in the document (the regex eats only ---[ \t]*) */
  const char *w2[] = {"# c\na: 1\n", "-x"};
  check_split("--- # c\na: 1\n----x", 2, w2);
  /* "---" not at line start does not split; a line starting with "---" inside a block does */
  const char *w3[] = {"a: \"---\"\nb: |\n  text\n", "more\n"};
  check_split("a: \"---\"\nb: |\n  text\n---more\n", 2, w3);
  /* only space (including Unicode spaces) gives nothing */
  check_split(" \n\t\xc2\xa0\xe3\x80\x80\n---\n", 0, NULL);
  /* left trim is Unicode-aware; right side is untouched */
  const char *w4[] = {"a: 1  \n\n"};
  check_split("\xc2\x85\xe2\x80\xa8 a: 1  \n\n", 1, w4);
  /* CRLF: \r is not part of the separator match, it starts the document and is trimmed */
  const char *w5[] = {"a: 1\r\n", "b: 2\r\n"};
  check_split("a: 1\r\n---\r\nb: 2\r\n", 2, w5);
  check_split("", 0, NULL);
}

static void scalar_tests(void) {
  CONV("a: 1\nb: -2\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: +5\nh: 0b101\ni: -0x10",
       "{\"a\":1,\"b\":-2,\"c\":31,\"d\":15,\"e\":15,\"f\":1000,\"g\":5,\"h\":5,\"i\":-16}");
  CONV("a: 1.5\nb: .5\nc: 1e3\nd: -1.25E-2\ne: 08\nf: 1.\ng: 6.02e+23",
       "{\"a\":1.5,\"b\":0.5,\"c\":1000,\"d\":-0.0125,\"e\":8,\"f\":1,\"g\":6.02e+23}");
  /* YAML 1.1 booleans and nulls as go-yaml v2 resolves them */
  CONV("a: yes\nb: Off\nc: y\nd: N\ne: TRUE\nf: on\ng: ~\nh: null\ni:\nj: NULL",
       "{\"a\":true,\"b\":false,\"c\":true,\"d\":false,\"e\":true,\"f\":true,\"g\":null,\"h\":null,\"i\":null,\"j\":null}");
  /* not resolved: quoted, block, odd spellings, timestamps, versions */
  CONV("a: \"1\"\nb: '2'\nc: |\n  3\nd: yEs\ne: 2024-01-02\nf: 1.2.3\ng: 0x\nh: 1_0.5x\ni: .\nj: -a\nk: 12:30",
       "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\\n\",\"d\":\"yEs\",\"e\":\"2024-01-02\",\"f\":\"1.2.3\",\"g\":\"0x\",\"h\":\"1_0.5x\",\"i\":\".\",\"j\":\"-a\",\"k\":\"12:30\"}");
  /* explicit tags */
  CONV("a: !!str 5\nb: !!float 5\nc: !!int \"7\"\nd: ! 8\ne: !custom 9\nf: !!binary aGk=",
       "{\"a\":\"5\",\"b\":5,\"c\":7,\"d\":\"8\",\"e\":\"9\",\"f\":\"hi\"}");
  char *s = conv("a: !!int foo", 0);
  CHECK(strstr(s, "cannot decode `foo` as a !!int") != NULL);
  free(s);
  /* NaN and infinity have no JSON form */
  s = conv("a: .nan", 0);
  CHECK(strncmp(s, "ERR(-22) line 1, column 4:", 26) == 0);
  free(s);
  s = conv("a:\n  - .inf", 0);
  CHECK(strstr(s, "line 2, column 5") != NULL);
  free(s);
  /* integer overflow: ParseInt fails, ParseUint succeeds; beyond uint64 it is a float */
  CONVF("a: 9007199254740993\nb: 18446744073709551615\nc: -9223372036854775808\nd: 5", YAML_OPT_BIGINT_RAW,
        "{\"a\":9007199254740993,\"b\":18446744073709551615,\"c\":-9223372036854775808,\"d\":5}");
  CONV("a: 18446744073709551616", "{\"a\":1.8446744073709552e+19}");
  /* the valuestring of numbers is what sigs.k8s.io/yaml gives a string field */
  cJSON *j;
  const char *nums = "a: 1234567\nb: 0.1\nc: 1e6\nd: 0x10";
  CHECK_EQ_INT(yaml_to_json(nums, strlen(nums), NULL, &j, NULL), 0);
  if (!j) return;
  CHECK_EQ_STR(cJSON_GetObjectItem(j, "a")->valuestring, "1234567");
  CHECK_EQ_STR(cJSON_GetObjectItem(j, "b")->valuestring, "0.1");
  CHECK_EQ_STR(cJSON_GetObjectItem(j, "c")->valuestring, "1e+06");
  CHECK_EQ_STR(cJSON_GetObjectItem(j, "d")->valuestring, "16");
  cJSON_Delete(j);
  /* keys: non-string scalars become text (bools too, the famous `on:`) */
  CONV("1: a\non: c\nn: b\n1.5: d\n0x10: e", "{\"1\":\"a\",\"true\":\"c\",\"false\":\"b\",\"1.5\":\"d\",\"16\":\"e\"}");
  /* true and on are the same key once resolved */
  s = conv("true: b\non: c", 0);
  CHECK(strstr(s, "line 2, column 1: mapping key \"true\" already defined") != NULL);
  free(s);
  s = conv("~: a", 0);
  CHECK(strstr(s, "unsupported map key (null)") != NULL);
  free(s);
  s = conv("[a]: b", 0);
  CHECK(strstr(s, "unsupported map key") != NULL);
  free(s);
}

static void float32_tests(void) {
  char b[32];
  yaml_format_float32(0.1, b, sizeof b);
  CHECK_EQ_STR(b, "0.1");
  yaml_format_float32(1e6, b, sizeof b);
  CHECK_EQ_STR(b, "1e+06");
  yaml_format_float32(123456, b, sizeof b);
  CHECK_EQ_STR(b, "123456");
  yaml_format_float32(1234567, b, sizeof b);
  CHECK_EQ_STR(b, "1.234567e+06");
  yaml_format_float32(0.0001, b, sizeof b);
  CHECK_EQ_STR(b, "0.0001");
  yaml_format_float32(0.00001, b, sizeof b);
  CHECK_EQ_STR(b, "1e-05");
  yaml_format_float32(-2.5, b, sizeof b);
  CHECK_EQ_STR(b, "-2.5");
  yaml_format_float32(3.14159265358979, b, sizeof b);
  CHECK_EQ_STR(b, "3.1415927");
  yaml_format_float32(1e39, b, sizeof b);
  CHECK_EQ_STR(b, "+Inf");
}

static void structure_tests(void) {
  CONV("", "null");
  CONV("# only a comment\n", "null");
  CONV("---\n...\n", "null");
  CONV("[1, [2, {a: b}], {}]", "[1,[2,{\"a\":\"b\"}],{}]");
  CONV("a:\n  b:\n    - c\n    - d: e\n", "{\"a\":{\"b\":[\"c\",{\"d\":\"e\"}]}}");
  /* only the first document is read, like go-yaml's Unmarshal */
  CONV("a: 1\n---\nb: 2\n", "{\"a\":1}");
  /* anchors, aliases and merges */
  CONV("base: &b {p: 1, q: 2}\nc: *b\nd:\n  <<: *b\n  q: 3\n", "{\"base\":{\"p\":1,\"q\":2},\"c\":{\"p\":1,\"q\":2},\"d\":{\"p\":1,\"q\":3}}");
  CONV("a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n", "{\"a\":{\"x\":1},\"b\":{\"x\":2,\"z\":2},\"c\":{\"x\":1,\"z\":2}}");
  CONV("s: &s hello\nt: *s\n", "{\"s\":\"hello\",\"t\":\"hello\"}");
  /* an anchor on a merged-away node stays usable */
  CONV("a:\n  <<: &m {k: v}\nb: *m\n", "{\"a\":{\"k\":\"v\"},\"b\":{\"k\":\"v\"}}");
  char *s = conv("a:\n  <<: 5\n", 0);
  CHECK(strstr(s, "map merge requires map") != NULL);
  free(s);
  s = conv("a: *nope\n", 0);
  CHECK(strstr(s, "line 1, column 4: unknown anchor 'nope'") != NULL);
  free(s);
}

static void error_tests(void) {
  char *s = conv("a: 1\nb: 2\na: 3\n", 0);
  CHECK_EQ_STR(s, "ERR(-22) line 3, column 1: mapping key \"a\" already defined");
  free(s);
  s = conv("x:\n  a: b: c\n", 0);
  CHECK_EQ_STR(s, "ERR(-22) line 2, column 7: mapping values are not allowed in this context");
  free(s);
  s = conv("a:\n  - b\n  c: d\n", 0);
  CHECK_EQ_STR(s, "ERR(-22) line 3, column 3: did not find expected '-' indicator (while parsing a block collection that started at line 2, column 3)");
  free(s);
  s = conv("a: \"unterminated\n", 0);
  CHECK(strstr(s, "ERR(-22) line 2") != NULL);
  free(s);
  s = conv("a: \"x\\0y\"", 0);
  CHECK(strstr(s, "NUL") != NULL);
  free(s);
  s = conv("\t- a", 0);
  CHECK(strncmp(s, "ERR(-22) line 1, column 1:", 26) == 0);
  free(s);
  /* invalid UTF-8 */
  s = conv("a: \xff\xfe", 0);
  CHECK(strncmp(s, "ERR(-22)", 8) == 0);
  free(s);
}

static void bomb_tests(void) {
  /* billion laughs */
  const char *bomb =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
      "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
      "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
      "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
      "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
  cJSON *j = NULL;
  yaml_error_t e;
  CHECK_EQ_INT(yaml_to_json(bomb, strlen(bomb), NULL, &j, &e), -E2BIG);
  CHECK(j == NULL);
  CHECK(strstr(e.message, "alias bomb") != NULL);
  /* a small budget stops even a modest expansion */
  yaml_opts_t o = {.max_alias_nodes = 20};
  const char *y = "a: &a [1,2,3,4,5]\nb: [*a, *a, *a, *a]\n";
  CHECK_EQ_INT(yaml_to_json(y, strlen(y), &o, &j, &e), -E2BIG);
  CHECK_EQ_INT(e.line, 2);
  o.max_alias_nodes = 100;
  CHECK_EQ_INT(yaml_to_json(y, strlen(y), &o, &j, &e), 0);
  cJSON_Delete(j);
  /* deep nesting is refused, not a stack overflow */
  size_t n = 100000;
  char *deep = malloc(n * 2 + 1);
  for (size_t i = 0; i < n; i++) {
    deep[i] = '[';
    deep[n + i] = ']';
  }
  deep[2 * n] = 0;
  CHECK_EQ_INT(yaml_to_json(deep, 2 * n, NULL, &j, &e), -E2BIG);
  CHECK(strstr(e.message, "nesting deeper than 500") != NULL);
  free(deep);
  /* many keys: duplicate detection stays fast */
  size_t keys = 200000;
  char *big = malloc(keys * 16 + 32);
  size_t len = 0;
  for (size_t i = 0; i < keys; i++) len += (size_t)sprintf(big + len, "k%zu: %zu\n", i, i);
  len += (size_t)sprintf(big + len, "k7: dup\n");
  CHECK_EQ_INT(yaml_to_json(big, len, NULL, &j, &e), -EINVAL);
  CHECK_EQ_INT(e.line, (int)keys + 1);
  free(big);
}

/* YAML_OPT_SIMPLE_HEAD against the full conversion: the same result code and error text for every
 * document, and the same head (apiVersion, kind, metadata.name, metadata.annotations). */
static void head_same(const char *y) {
  yaml_opts_t full = {.flags = YAML_OPT_DUP_LAST}, head = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_SIMPLE_HEAD};
  yaml_error_t ef, eh;
  cJSON *jf = NULL, *jh = NULL;
  int rf = yaml_to_json(y, strlen(y), &full, &jf, &ef);
  int rh = yaml_to_json(y, strlen(y), &head, &jh, &eh);
  CHECK_EQ_INT(rh, rf);
  if (rf || rh) {
    CHECK_EQ_STR(eh.message, ef.message);
    CHECK_EQ_STR(eh.context, ef.context);
  } else if (cJSON_IsObject(jf)) {
    const char *top[] = {"apiVersion", "kind"};
    for (int i = 0; i < 2; i++)
      CHECK(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(jf, top[i]), cJSON_GetObjectItemCaseSensitive(jh, top[i]), 1) ||
            (!cJSON_GetObjectItemCaseSensitive(jf, top[i]) && !cJSON_GetObjectItemCaseSensitive(jh, top[i])));
    const cJSON *mf = cJSON_GetObjectItemCaseSensitive(jf, "metadata"), *mh = cJSON_GetObjectItemCaseSensitive(jh, "metadata");
    CHECK(!mf == !mh);
    if (cJSON_IsObject(mf)) {
      const char *sub[] = {"name", "annotations"};
      for (int i = 0; i < 2; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(mf, sub[i]), *b = cJSON_GetObjectItemCaseSensitive(mh, sub[i]);
        CHECK((!a && !b) || cJSON_Compare(a, b, 1));
      }
      if (!strchr(y, '&')) CHECK(cJSON_GetObjectItemCaseSensitive(mh, "labels") == NULL); /* not built (anchored: whole) */
    } else if (mf) {
      CHECK(cJSON_Compare(mf, mh, 1));
    }
    CHECK(cJSON_GetObjectItemCaseSensitive(jh, "spec") == NULL);
  } else {
    CHECK(cJSON_Compare(jf, jh, 1));
  }
  cJSON_Delete(jf);
  cJSON_Delete(jh);
}

static void head_tests(void) {
  static const char *const docs[] = {
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\n  annotations:\n    helm.sh/hook: test\ndata:\n  k: v\n",
      "kind: A\nspec:\n  x: [1, 2, {a: b}]\n  y: 1e3\n  z: 0x1F\n  w: !!binary aGVsbG8=\n",
      "spec:\n  a: .nan\n", "spec:\n  a: !!float .inf\n", "spec: {a: !!int abc}\n", "spec: [!!bool maybe]\n",
      "spec:\n  ? [a, b]\n  : c\n", "spec:\n  ~: x\n", "spec:\n  null: x\n", "spec:\n  1.5: x\n  8080: y\n",
      "spec:\n  a: b\n   c: d\n", "spec: [a, b\n", "spec: *nope\n", "spec:\n  a: 1\n  a: 2\nkind: K\n",
      "base: &b {x: 1}\nspec:\n  <<: *b\n  y: 2\nmetadata: *b\n", "spec:\n  <<: [1, 2]\n", "spec:\n  <<: 5\n",
      "spec:\n  <<: [*x]\n", "a: &a [1, 2]\nspec:\n  - *a\n  - *a\nmetadata:\n  name: *a\n",
      "metadata: [1, 2]\n", "metadata: null\nkind: 5\n", "- a\n- b\n", "just text\n", "",
      "spec: !!binary '***'\n", "Kind: X\nMetadata:\n  Name: n\n  other: {a: b}\n",
      "metadata: &m\n  name: x\n  labels: {a: b}\nspec:\n  template:\n    metadata: *m\n",
      "spec:\n  x: 1\n---\nkind: second\n", "spec: {a: [b, {c: [d, [e, {f: .NaN}]]}]}\n",
      "spec:\n  t: !custom x\n", "spec:\n  ts: 2001-12-14\n  tt: !!timestamp 2001-12-14\n",
  };
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) head_same(docs[i]);
  /* A NUL in a scalar the head does not build: Go reads it (Helm sorts such manifests); a C string
   * cannot hold it, so only the full conversion refuses it. */
  {
    yaml_opts_t full = {.flags = YAML_OPT_DUP_LAST}, head = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_SIMPLE_HEAD};
    const char nul[] = "kind: K\nspec: \"a\\0b\"\n";
    yaml_error_t e;
    cJSON *j = NULL;
    CHECK_EQ_INT(yaml_to_json(nul, strlen(nul), &full, &j, &e), -EINVAL);
    CHECK_EQ_STR(e.message, "line 2, column 7: scalar contains a NUL character");
    CHECK_EQ_INT(yaml_to_json(nul, strlen(nul), &head, &j, &e), 0);
    CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(j, "kind")->valuestring, "K");
    cJSON_Delete(j);
  }
  /* alias budget and depth inside a skipped part */
  char *bomb = malloc(4096);
  strcpy(bomb, "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
  for (int i = 0; i < 9; i++)
    sprintf(bomb + strlen(bomb), "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", 'b' + i, 'b' + i, 'a' + i,
            'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i);
  strcat(bomb, "spec: [*j, *j]\n");
  head_same(bomb);
  free(bomb);
  size_t n = 1000;
  char *deep = malloc(n * 2 + 16);
  strcpy(deep, "spec: ");
  for (size_t i = 0; i < n; i++) deep[6 + i] = '[';
  for (size_t i = 0; i < n; i++) deep[6 + n + i] = ']';
  deep[6 + 2 * n] = 0;
  head_same(deep);
  free(deep);
}

/* The head scanner (yaml_head_fast) against libyaml on generated documents: whatever it accepts,
 * the libyaml conversion accepts too and builds the same head, keys in the same order. */
static unsigned fast_rng = 12345;
static unsigned fast_rnd(unsigned n) {
  fast_rng = fast_rng * 1103515245u + 12345u;
  return (fast_rng >> 16) % n;
}

static void fast_head_compare(const char *y, size_t *accepted, size_t *refused) {
  cJSON *jf = NULL, *jl = NULL;
  int f = yaml_head_fast(y, strlen(y), &jf);
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_SIMPLE_HEAD | YAML_OPT_NO_FAST_HEAD};
  yaml_error_t e;
  int rl = yaml_to_json(y, strlen(y), &o, &jl, &e);
  if (f) {
    (*accepted)++;
    char *a = cJSON_PrintUnformatted(jf), *b = rl ? NULL : cJSON_PrintUnformatted(jl);
    if (rl || strcmp(a, b)) {
      fprintf(stderr, "head scanner differs from libyaml (rc %d: %s) on:\n%s\nscanner: %s\nlibyaml: %s\n", rl,
              rl ? e.message : "", y, a, b ? b : "-");
      CHECK(!"the head scanner agrees with libyaml");
    }
    free(a);
    free(b);
  } else {
    (*refused)++;
  }
  cJSON_Delete(jf);
  cJSON_Delete(jl);
}

/* A scalar over several lines after "key:" or "-" in a collection at column indent, as encoders
 * fold long strings: plain, single- or double-quoted, its further lines mostly indented past the
 * collection (sometimes not), blank and comment lines between them, words that may end it early
 * or make a key of it. Sets fast_multi. */
static bool fast_multi, fast_multi_on;
static void fast_gen_multi(char *doc, size_t *len, size_t cap, int indent) {
  static const char *const words[] = {"word", "more words", "a: b", "x #y", "- item", "#c", "it''s", "it's",
                                      "say \"hi\"", "back\\slash", "end:", "?q", "\\u00e9", "\\x41", "---", "...",
                                      "k:v", "{a}", "[b]", "*x", "&y", "!t", "%p", "@q", "|", ">", "1", "true"};
  enum { NSAFE = 6 };
  unsigned q = fast_rnd(3); /* plain, single, double */
  bool clean = fast_rnd(2);
  const char *open = q == 1 ? "'" : q == 2 ? "\"" : "";
  int lines = 1 + (int)fast_rnd(3);
  fast_multi = true;
  *len += (size_t)snprintf(doc + *len, cap - *len, " %s%s", open, words[fast_rnd(clean ? NSAFE : sizeof words / sizeof *words)]);
  for (int i = 0; i < lines && *len < cap - 200; i++) {
    if (q == 2 && !fast_rnd(4)) *len += (size_t)snprintf(doc + *len, cap - *len, "\\"); /* an escaped line break */
    *len += (size_t)snprintf(doc + *len, cap - *len, "\n");
    if (!fast_rnd(6)) *len += (size_t)snprintf(doc + *len, cap - *len, "%*s\n", (int)fast_rnd(2) * (indent + 2), "");
    if (!clean && !fast_rnd(8)) *len += (size_t)snprintf(doc + *len, cap - *len, "%*s# note\n", indent + 2, "");
    unsigned w = fast_rnd(clean ? 12 : 8);
    int ind = w < 6 ? indent + 2 : w < 7 ? indent + 1 : w < 8 ? indent + 4 : w < 10 ? indent : 0;
    if (clean) ind = w < 11 ? indent + 2 : indent + 5;
    *len += (size_t)snprintf(doc + *len, cap - *len, "%*s%s", ind, "", words[fast_rnd(clean ? NSAFE : sizeof words / sizeof *words)]);
  }
  static const char *const tails[] = {"", "", " # c", " x", ": v"};
  *len += (size_t)snprintf(doc + *len, cap - *len, "%s%s\n", open, tails[fast_rnd(clean ? 3 : 5)]);
}

/* A structurally valid block document (the clean half of the generated ones). */
static void fast_gen_node(char *doc, size_t *len, size_t cap, int indent, int depth, bool seq, const char *const *keys,
                          size_t nk, const char *const *vals, size_t nv);

static void fast_gen_value(char *doc, size_t *len, size_t cap, int indent, int depth, const char *const *keys, size_t nk,
                           const char *const *vals, size_t nv) {
  /* after "key:" or "-": a scalar, a literal block, or a nested mapping or sequence */
  unsigned t = depth > 4 ? fast_rnd(2) : fast_rnd(6);
  if (fast_multi_on && !fast_rnd(4)) {
    fast_gen_multi(doc, len, cap, indent);
  } else if (t == 0) {
    *len += (size_t)snprintf(doc + *len, cap - *len, " %s\n", vals[fast_rnd((unsigned)nv)]);
  } else if (t == 1) {
    *len += (size_t)snprintf(doc + *len, cap - *len, " %s\n%*s%s\n\n%*s%s: x\n", fast_rnd(2) ? "|" : ">-", indent + 2, "",
                             vals[fast_rnd((unsigned)nv)], indent + 3, "", keys[fast_rnd((unsigned)nk)]);
  } else {
    *len += (size_t)snprintf(doc + *len, cap - *len, "\n");
    bool seq = t == 5;
    fast_gen_node(doc, len, cap, seq && fast_rnd(2) ? indent : indent + 2, depth + 1, seq, keys, nk, vals, nv);
  }
}

static void fast_gen_node(char *doc, size_t *len, size_t cap, int indent, int depth, bool seq, const char *const *keys,
                          size_t nk, const char *const *vals, size_t nv) {
  int n = 1 + (int)fast_rnd(4);
  for (int i = 0; i < n && *len < cap - 600; i++) {
    if (!fast_rnd(8)) *len += (size_t)snprintf(doc + *len, cap - *len, "%*s# note: %s\n", indent, "", vals[fast_rnd((unsigned)nv)]);
    if (seq) {
      unsigned t = fast_rnd(3);
      if (t == 0) {
        *len += (size_t)snprintf(doc + *len, cap - *len, "%*s- %s\n", indent, "", vals[fast_rnd((unsigned)nv)]);
      } else if (t == 1) {
        /* "- key: value" and more keys of that mapping under it */
        *len += (size_t)snprintf(doc + *len, cap - *len, "%*s- %s:", indent, "", keys[fast_rnd((unsigned)nk)]);
        fast_gen_value(doc, len, cap, indent + 2, depth + 1, keys, nk, vals, nv);
        if (fast_rnd(2)) fast_gen_node(doc, len, cap, indent + 2, depth + 1, false, keys, nk, vals, nv);
      } else {
        *len += (size_t)snprintf(doc + *len, cap - *len, "%*s-", indent, "");
        fast_gen_value(doc, len, cap, indent, depth + 1, keys, nk, vals, nv);
      }
    } else {
      *len += (size_t)snprintf(doc + *len, cap - *len, "%*s%s:", indent, "", keys[fast_rnd((unsigned)nk)]);
      fast_gen_value(doc, len, cap, indent, depth + 1, keys, nk, vals, nv);
    }
  }
}

static void fast_head_tests(void) {
  /* the first NSAFE_K keys and NSAFE_V values are in the scanner's subset; the others mostly not */
  enum { NSAFE_K = 16, NSAFE_V = 38 };
  static const char *const keys[] = {"apiVersion", "kind", "metadata", "name", "annotations", "Kind", "NAME", "Metadata",
                                     "labels", "spec", "a", "b", "x-y", "a.b/c", "helm.sh/hook", "9a", "true", "null",
                                     "1", "y", "Yes", "On", "~", "<<", "key with space", "0x1F", "1e3", ".5", "_x", "a:b"};
  static const char *const vals[] = {
      "v1", "Deployment", "apps/v1", "1", "1.5", "-3", "yes", "no", "null", "~", "\"\"", "''", "foo:bar", "a #c", "a#b",
      "http://x:80/y", "{}", "[]", "\"quoted\"", "\"esc \\\" \\n \\u00e9\"", "'single ''q'''", "\"x\" #c", "-x", "a,b",
      "a]", "$X", "(a)", "|", "|-", ">", "'it''s'", "0o17", "1_000", "2001-12-14", "--", "\"\\uD7FF\"",
      "[Ingress, Egress]", "{a: b, c: d}",
      "+1", ".inf", "-.inf", ".nan", "foo: bar", "[1]", "{a: 1}", "&a x", "*a", "!!str x", "\"\\u0000\"", "\"\\/\"",
      "\"\\x41\"", "\"unterminated", "'x' y", "\"x\"#c", "@x", "`x", "%x", "- x", "? x", ": x", "=b", "^c", "<d",
      "\\e", ";f", "foo:", "a\tb", "\xc3\xa9", "x  ", "|+", "|2", "| #c", "|x", "\"a\\tb\"", "-", "a: b: c",
      "x # y: z", "\"\\ud800\"", "[a,b]", "[ a , b ]", "{a: b, c: d}", "{a: b}", "[a, [b]]", "[a, ]", "[a b]",
      "[a, b] x", "[a, b] # c", "[a, b", "{a: b, c}", "{a:b}", "[-a, b]", "[a, 'b']", "[.5, x]", "{a: b, a: c}", "[a, b]]",
      "{a: [b]}"};
  size_t accepted = 0, refused = 0;
  char doc[4096];
  /* documents with multi-line scalars (a third of the structured ones): how many the scanner took */
  size_t multi_accepted = 0, multi_refused = 0;
  for (int d = 0; d < 30000; d++) {
    size_t len = 0;
    int cur = 0, nlines = 1 + (int)fast_rnd(18);
    doc[0] = 0;
    if (d % 3 == 0) {
      fast_multi = false;
      fast_multi_on = d % 9 == 0;
      fast_gen_node(doc, &len, sizeof doc, 0, 0, false, keys, NSAFE_K, vals, NSAFE_V);
      if (fast_multi) fast_head_compare(doc, &multi_accepted, &multi_refused);
      else fast_head_compare(doc, &accepted, &refused);
      continue;
    }
    for (int l = 0; l < nlines && len < sizeof doc - 300; l++) {
      unsigned w = fast_rnd(20);
      int ind = w < 12 ? cur : w < 16 ? cur + 2 : w < 18 ? (cur >= 2 ? cur - 2 : 0) : w < 19 ? 0 : cur + 1;
      if (d % 2 == 0) ind = w < 14 ? cur : w < 18 ? (cur >= 2 ? cur - 2 : 0) : 0; /* coherent indentation */
      if (ind > 12) ind = 12;
      char line[256];
      bool clean = d % 2 == 0; /* half the documents from the subset's pieces only */
      const char *k = keys[fast_rnd(clean ? NSAFE_K : sizeof keys / sizeof *keys)];
      const char *v = vals[fast_rnd(clean ? NSAFE_V : sizeof vals / sizeof *vals)];
      unsigned t = clean && fast_rnd(2) ? fast_rnd(80) : fast_rnd(clean ? 92 : 100);
      int nest = 0;
      if (t < 32) snprintf(line, sizeof line, "%*s%s: %s", ind, "", k, v);
      else if (t < 47) snprintf(line, sizeof line, "%*s%s:", ind, "", k), nest = 1;
      else if (t < 60) snprintf(line, sizeof line, "%*s- %s", ind, "", v);
      else if (t < 68) snprintf(line, sizeof line, "%*s- %s: %s", ind, "", k, v);
      else if (t < 72) snprintf(line, sizeof line, "%*s-", ind, ""), nest = 1;
      else if (t < 76) snprintf(line, sizeof line, "%*s# comment: %s", ind, "", v);
      else if (t < 80) snprintf(line, sizeof line, "%*s", (int)fast_rnd(3) * ind, "");
      else if (t < 90) snprintf(line, sizeof line, "%*s%s %s", ind + 2, "", v, k);
      else if (t < 92) snprintf(line, sizeof line, "%s", fast_rnd(2) ? "---" : "...");
      else if (t < 95) snprintf(line, sizeof line, "%*s%s :%s", ind, "", k, v);
      else snprintf(line, sizeof line, "%*s%s:%s%s", ind, "", k, fast_rnd(2) ? " " : "\t", v);
      if (nest) cur = ind + (fast_rnd(3) ? 2 : 0);
      else if (t >= 60 && t < 68) cur = ind + 2;
      else cur = ind;
      len += (size_t)snprintf(doc + len, sizeof doc - len, "%s%s", line, fast_rnd(30) ? "\n" : "");
    }
    fast_head_compare(doc, &accepted, &refused);
  }
  /* both sides of the scanner were exercised */
  printf("head scanner: %zu generated documents accepted, %zu left to libyaml; with multi-line scalars %zu and %zu\n",
         accepted, refused, multi_accepted, multi_refused);
  CHECK(accepted > 1000);
  CHECK(refused > 1000);
  CHECK(multi_accepted > 300);
  CHECK(multi_refused > 300);
  /* manifests as charts render them: in the subset, and the same as the full conversion */
  static const char *const docs[] = {
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\n  annotations:\n"
      "    checksum/config: 3f2a\n    helm.sh/hook: pre-install\nspec:\n  replicas: 3\n  template:\n    spec:\n"
      "      containers:\n        - name: web\n          image: \"nginx:1.25\"\n          args:\n          - --port=80\n"
      "          env:\n            - name: A\n              value: \"1\"\n          resources: {}\n",
      "# Source: x\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"cfg\"\ndata:\n  script: |\n    #!/bin/sh\n"
      "    echo \"a: b\" # not a comment\n\n    exit 0\n  other: >-\n    folded\n    text\n",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: 's'\n  annotations:\n    a: 'it''s'\n    b: \"x\\u00e9\\\"y\"\n",
      "kind: List\napiVersion: v1\nitems:\n- kind: A\n  metadata:\n    name: inner\nmetadata:\n  name: outer\n",
  };
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
    size_t a0 = accepted;
    fast_head_compare(docs[i], &accepted, &refused);
    CHECK(accepted == a0 + 1);
    head_same(docs[i]);
  }
}

/* ---------- the full-tree scanner (yaml_tree_fast) against libyaml ----------
 * Generated documents (every construct of the scanner's subset, and near-misses of each) go through
 * yaml_tree_fast and through yaml_to_json with YAML_OPT_NO_FAST: whatever the scanner accepts,
 * libyaml must accept and build the identical tree (node types, keys and their order, strings,
 * numbers and the texts they carry); with a small depth limit too. */

static unsigned long long tree_rng = 0x9E3779B97F4A7C15ull;
static unsigned tree_rnd(unsigned n) {
  tree_rng = tree_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(tree_rng >> 33) % n;
}
#define PICK(a) (a)[tree_rnd((unsigned)(sizeof(a) / sizeof *(a)))]

/* The same tree, node for node; the first difference goes to why. */
static bool tree_same(const cJSON *a, const cJSON *b, char *why, size_t n) {
  if (a->type != b->type) return snprintf(why, n, "type %d vs %d at key %s", a->type, b->type, a->string ? a->string : "-"), false;
  if (!a->string != !b->string || (a->string && strcmp(a->string, b->string)))
    return snprintf(why, n, "key %s vs %s", a->string ? a->string : "-", b->string ? b->string : "-"), false;
  if (!a->valuestring != !b->valuestring || (a->valuestring && strcmp(a->valuestring, b->valuestring)))
    return snprintf(why, n, "text \"%.60s\" vs \"%.60s\"", a->valuestring ? a->valuestring : "-",
                    b->valuestring ? b->valuestring : "-"), false;
  if (memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) || a->valueint != b->valueint)
    return snprintf(why, n, "number %.17g vs %.17g", a->valuedouble, b->valuedouble), false;
  const cJSON *x = a->child, *y = b->child;
  for (; x && y; x = x->next, y = y->next)
    if (!tree_same(x, y, why, n)) return false;
  if (x || y) return snprintf(why, n, "%s has more members", x ? "scanner" : "libyaml"), false;
  return true;
}

/* cJSON's list invariants (the head's prev is the tail, links both ways), which cJSON's own
 * functions rely on. */
static bool tree_links_ok(const cJSON *v) {
  const cJSON *c = v->child, *last = NULL;
  for (; c; last = c, c = c->next) {
    if (c != v->child && c->prev != last) return false;
    if (!tree_links_ok(c)) return false;
  }
  return !v->child || v->child->prev == last;
}

static bool tree_clean;
typedef struct tree_stats_s {
  size_t accepted, refused, lib_errors;
} tree_stats_t;

/* Compares the two conversions of y; 1 when the scanner accepted it, 0 when it left it to libyaml
 * (*lib_rc gets libyaml's result code). */
static int tree_compare(const char *y, size_t len, int flags, size_t max_depth, tree_stats_t *st, int *lib_rc) {
  yaml_opts_t fo = {.max_depth = max_depth, .flags = flags}, lo = {.max_depth = max_depth, .flags = flags | YAML_OPT_NO_FAST};
  cJSON *jf = NULL, *jl = NULL, *jd = NULL;
  yaml_error_t e;
  int f = yaml_tree_fast(y, len, &fo, &jf);
  int rl = yaml_to_json(y, len, &lo, &jl, &e);
  if (rl) st->lib_errors++;
  if (lib_rc) *lib_rc = rl;
  if (f) {
    st->accepted++;
    char why[200] = "";
    if (rl || !tree_same(jf, jl, why, sizeof why) || !tree_links_ok(jf)) {
      char *a = cJSON_PrintUnformatted(jf), *b = rl ? NULL : cJSON_PrintUnformatted(jl);
      fprintf(stderr, "tree scanner differs from libyaml (flags %d, depth %zu, rc %d: %s; %s) on:\n%.*s\n---\nscanner: %s\nlibyaml: %s\n",
              flags, max_depth, rl, rl ? e.message : "", why, (int)len, y, a, b ? b : "-");
      CHECK(!"the tree scanner agrees with libyaml");
      free(a);
      free(b);
    }
    /* and yaml_to_json takes the scanner's tree as it is */
    int rd = yaml_to_json(y, len, &fo, &jd, &e);
    CHECK(rd == 0 && jd && tree_same(jd, jf, why, sizeof why));
  } else {
    st->refused++;
  }
  cJSON_Delete(jf);
  cJSON_Delete(jl);
  cJSON_Delete(jd);
  return f;
}

/* Each pool: constructs libyaml reads (most of them in the scanner's subset), then near-misses
 * (errors, or valid YAML that the scanner leaves to libyaml). Clean documents use only the first. */
static const char *const tree_keys[] = {
    "a", "b", "c", "name", "x-y", "a.b/c", "key with space", "9a", "1", "0x10", "1.5", "1e3", ".5", "007", "1_0",
    "true", "on", "y", "No", "OFF", "\"q\"", "'s'", "\"\"", "\"a b\"", "\"<<\"", "\"1\"", "'on'", "_x", "a:b",
    "a b:c", "-k", "k#", "\xc3\xbc", "\xe6\x97\xa5\xe6\x9c\xac", "\"esc\\n\"", "'it''s'", "a,b", "a]", "$k",
    "18446744073709551616", "-1", "9223372036854775808", "0.1", "1e-05", "yes", "1234567", "0b11", "+5", "-0",
};
static const char *const tree_keys_odd[] = {
    "null", "~", "<<", "?k", ":k", ".inf", ".nan", "[a]", "{a: b}", "&a k", "*a", "!t k", "k ", "\"x\" y", "\"a\\0\"",
    "@k", "%k", "`k", "Null", "NULL", "\"a\" ", "'a'b", "-", "- k", "#k", "|", ">k",
};
static const char *const tree_plain[] = {
    "v1", "item-00001", "hello world", "a,b", "a]", "x{y}", "foo:bar", "http://x:80/y", "a#b", "a b  c",
    "\xc3\xbc" "n\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "emoji \xf0\x9f\x98\x80", "a 'q' b",
    "say \"hi\"", "$X", "(a)", "=b", "^c", "<d", "\\e", ";f", "~x", "-x", "--set=1", "x!", "a&b", "a*b", "a|b",
    "a>b", "a%b", "a@b", "a`b", "0", "1", "-1", "+1", "007", "08", "0x1F", "0X1f", "0o17", "0O17", "0b101", "-0x10",
    "+0b11", "1_000", "1__0", "_1", "1_", "1.5", ".5", "-.5", "+.5", "1.", "1e3", "1E+3", "-1.25E-2", "6.02e+23",
    "1e400", "-1e400", "9007199254740993", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "-9223372036854775809", "123456789012345678", "1234567890123456789", "999999999999999999", "0.1", "1e-05",
    "0.0001", "1234567", "3.14159265358979", "1.2.3", "1e", "e3", "0x", "0b2", "0o8", "1_0.5", "-0", "+0", "00",
    "0.", "-.", ".", "..", "12:30", "2001-12-14", "1,000", ".Inf.x", "y", "Y", "yes", "Yes", "YES", "yEs", "true",
    "True", "TRUE", "tRUE", "on", "On", "ON", "oN", "n", "N", "no", "No", "NO", "nO", "false", "False", "FALSE",
    "fAlse", "off", "Off", "OFF", "oFF", "~", "null", "Null", "NULL", "nULL", "NUll", "yes!", "nope", "o", "t", "f",
    "Tr", "nulls", "truee", "0x_1F", "0b1_0", "0o1_7", "-0b101", "+0o17", "0777", "0778", "01.5", "1e1_0",
    "1_000.5", "1_e3", "+-1", "--1", "1e+", "x  ", "<<", "a #c", "a  # c", "a\xc2\xa0" "b", "\xef\xbf\xbd",
};
static const char *const tree_plain_odd[] = {
    "x: y", "a: b: c", "-", "- x", "?x", ":x", "@x", "`x", "%x", "!x", "&a x", "*a", "!!str x", "a\tb", ".inf",
    "-.Inf", "+.INF", ".nan", ".NaN", ".NAN", ".Inf", "x:", "#x", "|x", ">x", "'x", "\"x", ",x", "]x", "}x", "\xe2\x80\xa9x", "a\xc2\x85" "b",
};
static const char *const tree_quoted[] = {
    "\"\"", "''", "\"x\"", "'x'", "\"a b  \"", "'  a '", "\"esc \\\" \\\\ \\/ \\n \\t \\r \\a \\b \\e \\f \\v \\  \\N \\_ \\L \\P\"",
    "\"\\x41\\xe9\\u00e9\\U0001F600\"", "\"\\x7f\\x80\\xff\\u07FF\\u0800\\uFFFF\\U00010000\\U0010FFFF\"", "'it''s'",
    "''''", "'a\\b'", "\"x\" #c", "\"x\" ", "\"a: b\"", "'# not'", "\"\xc3\xa9\xe6\x97\xa5\"", "'\xf0\x9f\x98\x80'",
    "\"tab\\tx\"", "\"1\"", "'true'", "\"~\"", "\"\\uFEFF\\u2028\"", "\"a'b\"", "'a\"b'", "\"#\"", "\"\\x01\"",
    "\"a\tb\t\"", "'\t'", "\"\\\t\"",
};
static const char *const tree_quoted_odd[] = {
    "\"\\u0000\"", "\"\\x00\"", "\"\\0\"", "\"\\ud800\"", "\"\\uDFFF\"", "\"\\U00110000\"", "\"\\UFFFFFFFF\"",
    "\"\\x4\"", "\"\\xg0\"", "\"\\q\"", "\"\\'\"", "'x' y", "\"x\"#c", "\"unterminated", "'unterminated",
    "\"a\" : b", "\"a\": b", "'a''", "\"a\\\"", "\"a\\", "\"\\U0001F60\"",
};
static const char *const tree_flow[] = {
    "[]", "{}", "[ ]", "{ }", "[1, 2, 3]", "[a, b c, \"q\", 'r']", "[1,2]", "[ 1 , 2 ]", "{a: 1, b: two}",
    "{a: 1, a: 2, b: 3, a: 4}", "{\"a\": 1}", "{'a': x}", "[-1, +2, .5, 0x10, ~, null, yes, 1_0]",
    "{1: a, on: b, 0x10: c, 1.5: d, true: e}", "[a, 'b''c', \"d\\\"e\"]", "[http://x]",
    "[\xc3\xbc, \xe6\x97\xa5]", "[ a b , c ]", "[-a]", "[+a]", "[a?b]", "{\"<<\": a}", "[\"x\" , 'y' ]", "[a] #c",
    "[1e400]", "{a: 1, b: two, c: three, d: four, e: five, f: six, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, "
    "n: 14, o: 15, p: 16, q: 17, a: 18, b: 19, r: 20}", "{\"a b\": [], c: 'd'}", "[a, b,]", "{\"a\":1}", "{a: [1]}",
    "{ a : b }", "[a, {}]", "{a: 1, b: [2]}", "{a: b, c: d,}", "{a: http://x}", "[a:b]", "[a\"b]", "{\"k\" : v}",
    "[[1, 2], [3]]", "{a: {b: {c: d}}}", "[{name: x, port: 80}, {name: y}]", "{a: [], b: {}}", "[a, [b, [c, []]]]",
    "{\"a\":\"b\",\"c\":[1,2,{\"d\":null}]}", "[--, -x-, +-]", "{a b: c d}", "[a:b:c]",
};
/* valid YAML that the scanner leaves to libyaml, and errors */
static const char *const tree_flow_odd[] = {
    "[-, a]", "[,]", "[a,,b]", "[a: b]", "[\"a\": b]", "{a:1}", "{a: }", "{a}", "[.inf]", "{~: a}", "{null: a}",
    "[a #c]", "[a]x", "{a: b: c}", "[a, b", "{a: b", "[?a]", "{<<: a}", "[\"\\u0000\"]", "{a :b}", "[!a x]",
    "[&a x]", "[*a]", "[|]", "[\"a\"b]", "[ ]x", "[]]", "{}}", "[a, [b]", "{a: {b}}", "[[a]: b]", "{[a]: b}", "[a:]",
    "[a:", "[ , a]", "[a,b,,]", "{a: 1,,}", "[a#b]", "{a:b: c}", "[a,]x", "[{a: .nan}]", "{\"a\" b: c}", "['x':y]",
};
static const char *const tree_headers[] = {"|", "|-", "|+", ">", ">-", ">+", "| #c", "|  ", ">- # c", "|-  "};
static const char *const tree_headers_odd[] = {"|2", "|-1", ">0", "|#c", "|x", "|+2", "|--", "| x"};
static const char *const tree_text[] = {"text", "more text", "a: b", "# not a comment", "- not an item", "\"q\"",
                                        "x  ", "  ", "", "\xc3\xa9", "key: {a: b}", "'s'", "\\n", "---", "...",
                                        "\tx", "a\tb", " \t", "\t"};
#define PICK2(ok, odd) (tree_clean || tree_rnd(12) ? PICK(ok) : PICK(odd))
static const char *const tree_comments[] = {"# c", "#", "# key: value", "#- item", "# \xc3\xa9", "#\ttab"};

static void tree_sp(buf_t *b, int n) {
  for (int i = 0; i < n; i++) buf_putc(b, ' ');
}

static void tree_gen_block(buf_t *b, int indent, int depth, bool seq);

/* A scalar value (after "key:" or "- "), with an optional trailing comment. */
static void tree_gen_scalar(buf_t *b) {
  unsigned t = tree_rnd(10);
  buf_puts(b, t < 5 ? PICK2(tree_plain, tree_plain_odd) : t < 8 ? PICK2(tree_quoted, tree_quoted_odd)
                    : PICK2(tree_flow, tree_flow_odd));
  if (!tree_rnd(6)) buf_puts(b, tree_rnd(2) ? " # c" : "   #: x");
  if (!tree_rnd(10)) tree_sp(b, 1 + (int)tree_rnd(3));
}

/* A block scalar's header and content; parent is the column of the collection holding it. */
static void tree_gen_blockscalar(buf_t *b, int parent) {
  buf_puts(b, PICK2(tree_headers, tree_headers_odd));
  buf_putc(b, '\n');
  int ind = parent + 1 + (int)tree_rnd(4);
  int n = (int)tree_rnd(6);
  if (!tree_rnd(10)) ind = parent, n = tree_clean ? 0 : n; /* an empty block: the next line is structure */
  bool content = false; /* the first content line sets the indentation: no more spaces before it */
  for (int i = 0; i < n; i++) {
    unsigned t = tree_rnd(12);
    if (t == 0) {
      buf_putc(b, '\n');
    } else if (t == 1) { /* spaces only */
      tree_sp(b, (int)tree_rnd((unsigned)ind + (content || !tree_clean ? 3 : 1)));
      buf_putc(b, '\n');
    } else {
      tree_sp(b, ind + (t == 2 && (content || !tree_clean) ? 1 + (int)tree_rnd(3) : t == 3 && !tree_clean ? -1 : 0));
      const char *x = PICK(tree_text);
      buf_puts(b, !content && tree_clean && (!*x || *x == ' ' || *x == '\t') ? "first" : x);
      buf_putc(b, '\n');
      content = true;
    }
  }
  if (!tree_rnd(4)) for (int i = (int)tree_rnd(3); i >= 0; i--) buf_putc(b, '\n'); /* trailing blank lines */
}

/* What follows "key:" or "-" (the collection holding it is at column col, the line so far ends
 * there): a value, nothing, or a nested collection on the next lines. */
static void tree_gen_after(buf_t *b, int col, int depth, bool from_map) {
  unsigned t = depth > 5 ? tree_rnd(3) : tree_rnd(9);
  if (t <= 1) {
    tree_sp(b, 1 + (tree_rnd(6) == 0));
    tree_gen_scalar(b);
    buf_putc(b, '\n');
  } else if (t == 2) {
    if (tree_rnd(3)) buf_puts(b, tree_rnd(2) ? " " : "");
    else buf_puts(b, " # nothing");
    buf_putc(b, '\n');
  } else if (t == 3) {
    buf_putc(b, ' ');
    tree_gen_blockscalar(b, col);
  } else {
    buf_putc(b, '\n');
    if (!tree_rnd(6)) buf_puts(b, "# between\n");
    bool seq = t >= 7;
    int step = 1 + (int)tree_rnd(4);
    if (seq && from_map && tree_rnd(2)) step = 0; /* indentless */
    tree_gen_block(b, col + step, depth + 1, seq);
  }
}

static void tree_gen_block(buf_t *b, int indent, int depth, bool seq) {
  int n = 1 + (int)tree_rnd(5);
  for (int i = 0; i < n && b->len < 6000; i++) {
    if (!tree_rnd(10)) {
      tree_sp(b, (int)tree_rnd((unsigned)indent + 4));
      buf_puts(b, PICK(tree_comments));
      buf_putc(b, '\n');
    }
    if (!tree_rnd(12)) {
      tree_sp(b, (int)tree_rnd(6));
      buf_putc(b, '\n');
    }
    tree_sp(b, indent);
    if (!seq) {
      buf_puts(b, tree_rnd(3) ? tree_keys[tree_rnd(12)] : PICK2(tree_keys, tree_keys_odd)); /* repeats are common */
      buf_putc(b, ':');
      tree_gen_after(b, indent, depth, true);
      continue;
    }
    buf_putc(b, '-');
    if (tree_rnd(3) == 0) {
      /* "- key: ..." and more keys of that mapping under it */
      int gap = 1 + (tree_rnd(5) == 0);
      tree_sp(b, gap);
      buf_puts(b, tree_rnd(3) ? tree_keys[tree_rnd(12)] : PICK2(tree_keys, tree_keys_odd));
      buf_putc(b, ':');
      tree_gen_after(b, indent + 1 + gap, depth + 1, true);
      if (tree_rnd(2)) tree_gen_block(b, indent + 1 + gap, depth + 1, false);
    } else {
      tree_gen_after(b, indent, depth, false);
    }
  }
}

/* Small changes that take a document near or over the edge of the subset. */
static void tree_mutate(buf_t *b) {
  static const char *const junk[] = {"\t", ":", " #", "#", "'", "\"", "- ", "? ", "---\n", "...\n", "\r", "\xc2\x85",
                                     "\xe2\x80\xa8", "\xef\xbb\xbf", "\xff", "\xc3\xa9", "&a ", "*a", "!!str ", "<<: ",
                                     "{", "[", "]", "}", ",", "\\", "\n", "  ", " ", "\x01", "\x7f", "\xc2\x80",
                                     "\xed\xa0\x80", "\xef\xbf\xbe", "\xf4\x90\x80\x80", "\xc0\xaf", "%YAML 1.1\n", "|"};
  if (!b->len) return;
  size_t at = tree_rnd((unsigned)b->len + 1);
  switch (tree_rnd(6)) {
  case 0: { /* re-indent a line */
    while (at > 0 && b->data[at - 1] != '\n') at--;
    if (tree_rnd(2) && b->data[at] == ' ') memmove(b->data + at, b->data + at + 1, b->len - at), b->len--;
    else {
      buf_putc(b, ' ');
      memmove(b->data + at + 1, b->data + at, b->len - at - 1);
      b->data[at] = ' ';
    }
    break;
  }
  case 1: /* delete a byte */
    if (at < b->len) memmove(b->data + at, b->data + at + 1, b->len - at), b->len--;
    break;
  case 2: /* cut the text */
    b->len = at;
    b->data[at] = 0;
    break;
  default: { /* insert something */
    const char *j = PICK(junk);
    size_t n = strlen(j), old = b->len;
    buf_append(b, j, n);
    memmove(b->data + at + n, b->data + at, old - at);
    memcpy(b->data + at, j, n);
    break;
  }
  }
}

/* JSON written as YAML (values files generated by tools), pretty-printed over many lines or on one:
 * the scanner reads a root flow collection across line breaks between entries. Compared with
 * libyaml as the other generated documents, clean ones must all be in the subset, and mutated ones
 * (a break inside a key or scalar, a comment, a tab, a missing comma) show where it stops. */
static const char *const json_scalars[] = {
    "\"a\"", "\"with space\"", "\"esc \\\" \\\\ \\n \\t \\u00e9\"", "\"{{ .Release.Name }}-x\"", "\"x: y\"",
    "\"# no comment\"", "\"\"", "\"\xc3\xa9t\xc3\xa9\"", "1", "0", "-3", "1.5", "1e3", "8000", "-0.5", "1E+2",
    "12345678901234567890", "true", "false", "null", "\"[not, flow]\"", "\"yes\"", "\"0x10\"",
};
static const char *const json_odd[] = {"\"\\ud83d\\ude00\"", "\"\\/\"", "'single'", "plain", "1_000", ".5", "0x10",
                                       "\"a\nb\"", "~", "yes"};
static void json_gen(buf_t *b, int depth, int indent, int step) {
  unsigned t = depth > 4 ? 2 + tree_rnd(2) : tree_rnd(4);
  if (t >= 2) {
    buf_puts(b, tree_clean || tree_rnd(10) ? PICK(json_scalars) : PICK(json_odd));
    return;
  }
  bool map = t == 0;
  int n = (int)tree_rnd(5);
  buf_putc(b, map ? '{' : '[');
  for (int i = 0; i < n; i++) {
    if (i) buf_putc(b, ',');
    if (step) {
      buf_putc(b, '\n');
      tree_sp(b, indent + step);
    } else if (i) {
      buf_putc(b, ' ');
    }
    if (map) buf_printf(b, "\"%s%d\": ", tree_rnd(3) ? "k" : "key with space ", (int)tree_rnd(6));
    json_gen(b, depth + 1, indent + step, step);
  }
  if (n && step) {
    buf_putc(b, '\n');
    tree_sp(b, indent);
  }
  buf_putc(b, map ? '}' : ']');
}

static void tree_json_tests(void) {
  tree_stats_t st = {0};
  size_t clean = 0, clean_acc = 0;
  buf_t b = BUF_INIT;
  for (int d = 0; d < 6000; d++) {
    buf_reset(&b);
    tree_clean = tree_rnd(2);
    if (!tree_rnd(6)) buf_puts(&b, "# generated\n");
    int step = tree_rnd(4) ? 2 + 2 * (int)tree_rnd(2) : 0;
    int n = 1 + (int)tree_rnd(6);
    bool map = tree_rnd(3) != 0;
    buf_putc(&b, map ? '{' : '[');
    for (int i = 0; i < n; i++) {
      if (i) buf_putc(&b, ',');
      if (step) buf_putc(&b, '\n'), tree_sp(&b, step);
      else if (i) buf_putc(&b, ' ');
      if (map) buf_printf(&b, "\"k%d\": ", (int)tree_rnd(8));
      json_gen(&b, 1, step, step);
    }
    if (step) buf_putc(&b, '\n');
    buf_putc(&b, map ? '}' : ']');
    if (tree_rnd(4)) buf_putc(&b, '\n');
    if (!tree_rnd(8)) buf_puts(&b, b.data[b.len - 1] == '\n' ? "# after\n\n" : " # after\n");
    bool mutated = !tree_clean && tree_rnd(2);
    if (mutated)
      for (int m = 1 + (int)tree_rnd(2); m > 0; m--) tree_mutate(&b);
    int flags = YAML_OPT_DUP_LAST | (tree_rnd(2) ? YAML_OPT_NO_NUMBER_TEXT : 0);
    size_t depth = tree_rnd(8) ? 0 : 1 + tree_rnd(5);
    int rl;
    int f = tree_compare(b.data, b.len, flags, depth, &st, &rl);
    if (tree_clean && !mutated && !depth) {
      clean++;
      clean_acc += (size_t)f;
      if (!f) fprintf(stderr, "clean JSON document outside the subset (libyaml rc %d):\n%.*s\n", rl, (int)b.len, b.data);
      CHECK(f);
    }
  }
  buf_free(&b);
  printf("tree scanner on JSON: %zu accepted (%zu of %zu clean ones), %zu left to libyaml (%zu libyaml errors)\n",
         st.accepted, clean_acc, clean, st.refused, st.lib_errors);
  CHECK(st.accepted > 2000);
  CHECK(st.refused > 500);
}

static void tree_fast_tests(void) {
  const char *env = getenv("RUDDER_YAML_TREE_DOCS");
  long docs = env ? atol(env) : 20000;
  const char *seed = getenv("RUDDER_YAML_TREE_SEED"); /* by hand: more documents, other seeds */
  if (seed) tree_rng = strtoull(seed, NULL, 0);
  tree_stats_t st = {0};
  size_t clean_acc = 0, clean = 0;
  buf_t b = BUF_INIT;
  for (long d = 0; d < docs; d++) {
    buf_reset(&b);
    unsigned kind = tree_rnd(8);
    tree_clean = tree_rnd(2);
    if (kind == 0) {
      /* a line soup: flat lines of any construct at random columns */
      int nl = 1 + (int)tree_rnd(12), cur = 0;
      for (int l = 0; l < nl; l++) {
        unsigned w = tree_rnd(10);
        int ind = w < 5 ? cur : w < 7 ? cur + 2 : w < 9 ? (cur >= 2 ? cur - 2 : 0) : cur + 1;
        tree_sp(&b, ind);
        switch (tree_rnd(6)) {
        case 0: buf_printf(&b, "%s: ", PICK2(tree_keys, tree_keys_odd)); tree_gen_scalar(&b); break;
        case 1: buf_printf(&b, "%s:", PICK2(tree_keys, tree_keys_odd)); cur = ind + 2; break;
        case 2: buf_puts(&b, "- "); tree_gen_scalar(&b); break;
        case 3: buf_printf(&b, "- %s: ", PICK2(tree_keys, tree_keys_odd)); tree_gen_scalar(&b); break;
        case 4: buf_puts(&b, "-"); cur = ind + 2; break;
        default: tree_gen_scalar(&b); break;
        }
        buf_putc(&b, '\n');
      }
    } else {
      int root = (int)(tree_rnd(10) == 0);
      if (!tree_rnd(8)) buf_puts(&b, "# head comment\n\n");
      tree_gen_block(&b, root, 0, tree_rnd(6) == 0);
    }
    if (!tree_rnd(6) && b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = 0; /* no final newline */
    if (!tree_rnd(10)) { /* CRLF line ends */
      buf_t c = BUF_INIT;
      for (size_t i = 0; i < b.len; i++) {
        if (b.data[i] == '\n') buf_putc(&c, '\r');
        buf_putc(&c, b.data[i]);
      }
      buf_reset(&b);
      buf_append(&b, c.data ? c.data : "", c.len);
      buf_free(&c);
    }
    bool mutated = kind != 0 && !tree_clean && tree_rnd(2);
    if (mutated)
      for (int m = 1 + (int)tree_rnd(2); m > 0; m--) tree_mutate(&b);
    int flags = YAML_OPT_DUP_LAST | (tree_rnd(2) ? YAML_OPT_NO_NUMBER_TEXT : 0);
    size_t depth = tree_rnd(8) ? 0 : 1 + tree_rnd(5);
    int rl;
    int f = tree_compare(b.data ? b.data : "", b.len, flags, depth, &st, &rl);
    if (tree_clean && kind != 0 && !mutated && !depth) {
      /* made of the subset's pieces only: valid, and all of it read by the scanner */
      clean++;
      clean_acc += (size_t)f;
      if (rl || !f) {
        yaml_opts_t lo = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_NO_FAST};
        yaml_error_t e;
        cJSON *j = NULL;
        yaml_to_json(b.data, b.len, &lo, &j, &e);
        cJSON_Delete(j);
        fprintf(stderr, "clean document %s (%s):\n%.*s\n", rl ? "refused by libyaml" : "outside the scanner's subset",
                rl ? e.message : "", (int)b.len, b.data);
        CHECK(!"a clean generated document is in the subset");
      }
    }
  }
  buf_free(&b);
  printf("tree scanner: %ld generated documents, %zu accepted (%zu of %zu clean ones), %zu left to libyaml (%zu of all "
         "are libyaml errors)\n", docs, st.accepted, clean_acc, clean, st.refused, st.lib_errors);
  /* both sides were exercised */
  CHECK(st.accepted > (size_t)docs / 5);
  CHECK(st.refused > (size_t)docs / 5);

  /* values files as charts ship them: in the subset, and the same as libyaml's */
  static const char *const files[] = {
      "replicaCount: 1\nimage:\n  repository: nginx\n  pullPolicy: IfNotPresent\n  # Overrides the image tag.\n  tag: \"\"\n"
      "imagePullSecrets: []\nnameOverride: \"\"\nserviceAccount:\n  create: true\n  annotations: {}\n  name: \"\"\n"
      "podAnnotations: {}\nsecurityContext: {}\n  # capabilities:\n  #   drop:\n  #   - ALL\nservice:\n  type: ClusterIP\n"
      "  port: 80\ningress:\n  enabled: false\n  className: \"\"\n  hosts:\n    - host: chart-example.local\n      paths:\n"
      "        - path: /\n          pathType: ImplementationSpecific\n  tls: []\nresources: {}\nautoscaling:\n"
      "  enabled: false\n  minReplicas: 1\n  maxReplicas: 100\n  targetCPUUtilizationPercentage: 80\nnodeSelector: {}\n"
      "tolerations: []\naffinity: {}\n",
      "config: |\n  [server]\n  port = 8080\n\n  [log]\n  level = \"info\"\nmotd: >-\n  Welcome to\n  the server.\n\n"
      "  Enjoy.\nlist:\n- a\n- b: 1\n  c: [x, 'y', \"z\"]\n- {k: v, n: 0o17}\n",
      "count: 2\nitems:\n  - name: item-00000\n    enabled: false\n    weight: 0.5\n    labels:\n      tier: t0\n"
      "      zone: zone-0\n    ports: [8000, 9000, 10000]\n    note: \"xxx\"\n",
  };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    size_t a0 = st.accepted;
    tree_compare(files[i], strlen(files[i]), YAML_OPT_DUP_LAST | YAML_OPT_NO_NUMBER_TEXT, 0, &st, NULL);
    tree_compare(files[i], strlen(files[i]), YAML_OPT_DUP_LAST, 0, &st, NULL);
    CHECK(st.accepted == a0 + 2);
  }
  /* edges: each compared, and those marked 1 must be in the subset */
  static const struct { const char *y; int in; } edges[] = {
      {"", 1}, {"# only a comment\n", 1}, {"  \n\n   \n", 1}, {"a: 1\r\nb: 2\r\n", 1}, {"a: 1\rb: 2\n", 0}, {"a: 1\r", 0},
      {"a: |\r\n  x\r\n\r\n  y\r\nb: 1\r\n", 1}, {"a: 1\n\t\nb: 2\n", 0}, {"a: |\n \tx\n", 0}, {"a: |\n\tx\n", 0},
      {"a: |\n  x\n \ty\n", 0}, {"a: |\n  x\n  \ty\n", 1}, {"a: >\n  x\n  \tz\n  w\n", 1}, {"a: \"x\ty\t\"\nb: '\tq'\n", 1},
      {"# c\twith tab\na: 1 # c\tx\n", 1}, {"a: 1\t# c\n", 0}, {"a: x\ty\n", 0}, {"a:\t1\n", 0}, {"\ta: 1\n", 0},
      {"a: [x,\ty]\n", 0}, {"a: \"\\\tx\"\n", 1}, {"\xef\xbb\xbf" "a: 1\n", 0},
      {"a:\tb\n", 0}, {"- - a\n", 0}, {"a: |\n  x", 1}, {"a: |\n  x\n  ", 1}, {"a: |\n  x\n     ", 1},
      {"a: |+\n  x\n\n\n", 1}, {"a: >\n  x\n\n  y\n   z\n  w\n", 1}, {"a: |", 1}, {"a: |-\n", 1}, {"a: >+\n\n\nb: 1\n", 1},
      {"a: |\n   \n  x\n", 0}, {"- |\n x\n-\n", 1}, {"a:\n- |\n  x\n", 1}, {"- a: |\n    x\n  b: >-\n   y\n", 1},
      {"a: b\n---\nc: d\n", 0}, {"--- \na: b\n", 0}, {"a: b\n...\n", 0}, {"%YAML 1.1\n---\na: b\n", 0},
      {"a: 'x\n  y'\n", 0}, {"a: x\n  y\n", 0}, {"a:\n  x\n", 0}, {"a: &x 1\nb: *x\n", 0}, {"<<: {a: 1}\n", 0},
      {"? a\n: b\n", 0}, {"a: !!str 1\n", 0}, {"a: \"\\u0000\"\n", 0}, {"a: \xc2\x85\n", 0}, {"a: \xe2\x80\xa8\n", 0},
      {"a: \xef\xbf\xbe\n", 0}, {"a: \xed\xa0\x80\n", 0}, {"a: \xf0\x9f\x98\x80\n", 1}, {"a: \x7f\n", 0},
  };
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
    int rl, f = tree_compare(edges[i].y, strlen(edges[i].y), YAML_OPT_DUP_LAST, 0, &st, &rl);
    if (f != edges[i].in) fprintf(stderr, "edge %zu: scanner %d, want %d\n", i, f, edges[i].in);
    CHECK(f == edges[i].in);
  }
  /* keys near libyaml's 1024-character limit for simple keys; scalars of a megabyte */
  size_t klens[] = {900, 1000, 1001, 1023, 1024, 1025, 1100};
  for (size_t i = 0; i < sizeof klens / sizeof *klens; i++)
    for (int q = 0; q < 3; q++) {
      buf_reset(&b);
      buf_puts(&b, q == 2 ? "k: {" : "");
      buf_puts(&b, q == 1 ? "\"" : "");
      for (size_t k = 0; k < klens[i] - (q == 1 ? 2 : 0); k++) buf_putc(&b, (char)('a' + k % 26));
      buf_puts(&b, q == 1 ? "\"" : "");
      buf_puts(&b, q == 2 ? ": v}\n" : ": v\n");
      int rl, f = tree_compare(b.data, b.len, YAML_OPT_DUP_LAST, 0, &st, &rl);
      if (f != (klens[i] <= 1000)) fprintf(stderr, "key of %zu (form %d): scanner %d\n", klens[i], q, f);
      CHECK(f == (klens[i] <= 1000));
    }
  buf_reset(&b);
  buf_puts(&b, "big: \"");
  for (int k = 0; k < 100000; k++) buf_puts(&b, "abcdefghij");
  buf_puts(&b, "\"\nplain: ");
  for (int k = 0; k < 100000; k++) buf_puts(&b, "abcdefghi ");
  buf_puts(&b, "end\nesc: \"");
  for (int k = 0; k < 10000; k++) buf_puts(&b, "\\L\\x41\\u00e9");
  buf_puts(&b, "\"\n");
  CHECK(tree_compare(b.data, b.len, YAML_OPT_DUP_LAST | YAML_OPT_NO_NUMBER_TEXT, 0, &st, NULL) == 1);
  /* nesting: within the depth limit read, beyond it left to libyaml (which reports it) */
  for (int deep = 0; deep < 4; deep++) {
    int levels = deep & 1 ? 501 : 499;
    buf_reset(&b);
    for (int k = 0; k < levels; k++) {
      if (deep < 2) tree_sp(&b, k), buf_puts(&b, k % 2 ? "- \n" : "a:\n");
      else buf_putc(&b, k % 2 ? '[' : '[');
    }
    if (deep < 2) tree_sp(&b, levels), buf_puts(&b, "x: 1\n");
    else for (int k = 0; k < levels; k++) buf_putc(&b, ']');
    int rl, f = tree_compare(b.data, b.len, YAML_OPT_DUP_LAST, 0, &st, &rl);
    if (deep < 2) CHECK(f == (levels < 500) && (rl != 0) == (levels >= 500));
  }
  /* repeated keys past the hashed size keep the first place, the last value */
  buf_reset(&b);
  for (int i = 0; i < 100; i++) buf_printf(&b, "k%d: %d\n", i % 40, i);
  tree_compare(b.data, b.len, YAML_OPT_DUP_LAST, 0, &st, NULL);
  cJSON *j = NULL;
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST};
  CHECK(yaml_tree_fast(b.data, b.len, &o, &j) == 1);
  CHECK(j && cJSON_GetArraySize(j) == 40 && cJSON_GetArrayItem(j, 3)->valueint == 83);
  cJSON_Delete(j);
  buf_free(&b);
}

/* The head scanner takes only printable ASCII and '\n': a control byte, DEL or a byte from 0x80 at
 * any offset (the check goes 16 bytes at a time) sends the document to libyaml. */
static void test_head_fast_bytes(void) {
  const char *base = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-rather-long-name-here\n  labels:\n    x: y\n";
  size_t n = strlen(base);
  cJSON *j = NULL;
  CHECK(yaml_head_fast(base, n, &j) == 1);
  cJSON_Delete(j);
  static const unsigned char bad[] = {0x01, 0x09, 0x0d, 0x1f, 0x7f, 0x80, 0xc3, 0xff};
  int all = 1;
  for (size_t k = 0; k < sizeof bad; k++)
    for (size_t at = 0; at < n; at++) {
      char t[256];
      memcpy(t, base, n);
      t[at] = (char)bad[k];
      j = NULL;
      if (yaml_head_fast(t, n, &j) != 0) all = 0, fprintf(stderr, "byte 0x%02x at %zu accepted\n", bad[k], at);
      cJSON_Delete(j);
    }
  CHECK(all);
}

int main(void) {
  test_head_fast_bytes();
  head_tests();
  fast_head_tests();
  tree_fast_tests();
  tree_json_tests();
  split_tests();
  scalar_tests();
  float32_tests();
  structure_tests();
  error_tests();
  bomb_tests();
  return t_done();
}
