/* Unit tests of the template engine's API: values, fmt, parse and execute. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/tpl.h"
#include "helm/template/unicode.h"
#include "t.h"

static char *render(const char *text, const char *json, tpl_missingkey_t mk, buf_t *err) {
  static buf_t out;
  buf_reset(&out);
  buf_reset(err);
  tpl_funcs_t *f = tpl_funcs_new();
  tpl_helm_funcs_add(f);
  tpl_set_t *s = tpl_set_new(f);
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_value_t data;
  int rc = tpl_value_from_json(a, json, strlen(json), &data, err);
  if (!rc) rc = tpl_set_parse(s, "t", text, strlen(text), err);
  tpl_exec_opts_t o = {.missingkey = mk};
  tpl_helm_state_t hs = {0};
  o.udata = &hs;
  if (!rc) rc = tpl_set_execute(s, "t", data, a, &o, &out, err);
  tpl_arena_free(a);
  tpl_set_free(s);
  tpl_funcs_free(f);
  if (rc) return NULL;
  return out.data ? out.data : "";
}

static void test_float_format(void) {
  buf_t b = BUF_INIT;
  tpl_fmt_float(&b, 1000000, 'g', -1);
  CHECK_EQ_STR(b.data, "1e+06");
  buf_reset(&b);
  tpl_fmt_float(&b, 0.00001, 'g', -1);
  CHECK_EQ_STR(b.data, "1e-05");
  buf_reset(&b);
  tpl_fmt_float(&b, 100000, 'g', -1);
  CHECK_EQ_STR(b.data, "100000");
  buf_reset(&b);
  tpl_fmt_float(&b, 0.1, 'g', -1);
  CHECK_EQ_STR(b.data, "0.1");
  buf_reset(&b);
  tpl_fmt_float(&b, 3.14159, 'f', 2);
  CHECK_EQ_STR(b.data, "3.14");
  buf_reset(&b);
  tpl_fmt_float(&b, -INFINITY, 'g', -1);
  CHECK_EQ_STR(b.data, "-Inf");
  buf_free(&b);
}

static void test_sprintf(void) {
  buf_t b = BUF_INIT;
  tpl_value_t args[2] = {tpl_value_str("x"), tpl_value_int(3)};
  tpl_fmt_sprintf(&b, "%d|%5s|%!", 9, args, 2);
  CHECK_EQ_STR(b.data, "%!d(string=x)|%!s(int=    3)|%!!(MISSING)");
  buf_reset(&b);
  tpl_fmt_sprintf(&b, "%d %d", 5, args + 1, 1);
  CHECK_EQ_STR(b.data, "3 %!d(MISSING)");
  buf_free(&b);
}

static void test_render(void) {
  buf_t err = BUF_INIT;
  CHECK_EQ_STR(render("{{ .a }} {{ .b }} {{ .c }}", "{\"a\":1000000,\"b\":[1,\"x\",null],\"c\":{\"k\":true}}",
                      TPL_MISSINGKEY_ZERO, &err),
               "1e+06 [1 x <nil>] map[k:true]");
  CHECK_EQ_STR(render("{{ .missing }}", "{}", TPL_MISSINGKEY_ZERO, &err), "<no value>");
  CHECK(render("{{ .a.b }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1:5: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b");
  CHECK(render("{{ if }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1: missing value for if");
  CHECK(render("{{ .x }}", "{}", TPL_MISSINGKEY_ERROR, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1:3: executing \"t\" at <.x>: map has no entry for key \"x\"");
  CHECK_EQ_STR(render("{{ define \"h\" }}[{{ . }}]{{ end }}{{ include \"h\" 2 | printf \"%q\" }}", "{}", TPL_MISSINGKEY_ZERO,
                      &err),
               "\"[2]\"");
  CHECK_EQ_STR(render("{{ range $i, $e := .l }}{{ if eq $e 2.0 }}{{ continue }}{{ end }}{{ $i }}{{ end }}",
                      "{\"l\":[1,2,3]}", TPL_MISSINGKEY_ZERO, &err),
               "02");
  CHECK(render("{{ eq 1 1.0 }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK(strstr(err.data, "incompatible types for comparison: int and float64") != NULL);
  buf_free(&err);
}

static void test_limits(void) {
  buf_t err = BUF_INIT;
  /* Unbounded template recursion ends with an error, not a crash. */
  CHECK(render("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}", "{}", TPL_MISSINGKEY_ZERO, &err) ==
        NULL);
  /* Runaway include recursion hits Helm's limit of 1000 per name (or the stack budget). */
  CHECK(render("{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}", "{}", TPL_MISSINGKEY_ZERO, &err) ==
        NULL);
  buf_free(&err);
}

/* Deep nesting runs on mmap'd stack segments; a small stack cap gives a clear error, not a crash. */
static void test_deep_stack(void) {
  const char *text = "{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}";
  tpl_set_t *s = tpl_set_new(NULL);
  buf_t out = BUF_INIT, err = BUF_INIT;
  CHECK_EQ_INT(tpl_set_parse(s, "t", text, strlen(text), &err), 0);
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_exec_opts_t o = {.max_stack = 32u << 20};
  CHECK_EQ_INT(tpl_set_execute(s, "t", tpl_value_nil(), a, &o, &out, &err), TPL_ELIMIT);
  CHECK(err.data && strstr(err.data, "template nesting too deep (stack limit of 33554432 bytes exhausted)"));
  tpl_exec_opts_t d = {0};
  CHECK_EQ_INT(tpl_set_execute(s, "t", tpl_value_nil(), a, &d, &out, &err), TPL_EEXEC);
  CHECK(err.data && strstr(err.data, "exceeded maximum template depth (100000)"));
  tpl_arena_free(a);
  tpl_set_free(s);
  /* 100000 nested ifs parse and run (Go has no limit on control nesting). */
  buf_t t = BUF_INIT;
  for (int i = 0; i < 100000; i++) buf_puts(&t, "{{if 1}}");
  buf_puts(&t, "x");
  for (int i = 0; i < 100000; i++) buf_puts(&t, "{{end}}");
  s = tpl_set_new(NULL);
  a = tpl_arena_new(0);
  buf_reset(&out);
  CHECK_EQ_INT(tpl_set_parse(s, "t", t.data, t.len, &err), 0);
  int rc = tpl_set_execute(s, "t", tpl_value_nil(), a, &d, &out, &err);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%.200s\n", err.data);
  CHECK_EQ_STR(out.data, "x");
  tpl_arena_free(a);
  tpl_set_free(s);
  buf_free(&t);
  buf_free(&out);
  buf_free(&err);
}

/* Capacities as Go's append gives them (values from Go 1.26 runs). */
static void test_append_cap(void) {
  tpl_arena_t *a = tpl_arena_new(0);
  static const size_t want[] = {0, 1, 2, 4, 4, 8, 8, 8, 8, 16};
  tpl_value_t l = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
  for (size_t i = 0; i < 10; i++) {
    CHECK_EQ_INT(l.u.list->cap, want[i]);
    tpl_list_push(a, l.u.list, tpl_value_nil());
  }
  for (size_t i = 10; i < 3000; i++) tpl_list_push(a, l.u.list, tpl_value_nil());
  CHECK_EQ_INT(l.u.list->cap, 3584); /* cap(json-decoded [3000]any) */
  CHECK_EQ_INT(l.u.list->items[3000].kind, TPL_NIL);
  tpl_value_t f = tpl_value_list_new(a, TPL_ELEM_FLOAT64, 5);
  for (int i = 0; i < 6; i++) tpl_list_push(a, f.u.list, tpl_value_float(i));
  CHECK_EQ_INT(f.u.list->cap, 10);
  CHECK_EQ_INT(f.u.list->items[9].kind, TPL_FLOAT64);
  tpl_value_t b = tpl_value_list_new(a, TPL_ELEM_BOOL, 1);
  tpl_list_push(a, b.u.list, tpl_value_bool(true));
  tpl_list_push(a, b.u.list, tpl_value_bool(true));
  CHECK_EQ_INT(b.u.list->cap, 8);
  CHECK_EQ_INT(tpl_go_append_cap(256, 257, 16, false), 591);
  CHECK_EQ_INT(tpl_go_append_cap(512, 513, 8, true), 848);
  tpl_arena_free(a);
}

/* A host function that appends to its list argument in place (no Sprig function does; a host may). */
static int push_in_place(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  (void)n;
  tpl_value_t s = tpl_value_str_copy(tpl_call_arena(c), "pushed", 6);
  if (s.kind != TPL_STRING || args[0].kind != TPL_LIST || !args[0].u.list) return TPL_ENOMEM;
  *out = tpl_value_str("");
  return tpl_list_push(tpl_call_arena(c), args[0].u.list, s);
}

/* tpl_arena_mark/release: what was made after the mark is given back, unless a list or map made
 * before it was written (then it is all kept). */
static void test_arena_mark(void) {
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_value_t old = tpl_value_map_new(a, TPL_ELEM_ANY);
  tpl_value_t ol = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
  for (int i = 0; i < 3; i++) tpl_list_push(a, ol.u.list, tpl_value_int(i)); /* len 3, cap 4 */
  size_t used = tpl_arena_used(a);
  /* only new lists and maps written: released */
  tpl_arena_mark_t m = tpl_arena_mark(a);
  tpl_value_t nm = tpl_value_map_new(a, TPL_ELEM_ANY);
  tpl_value_t nl = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
  for (int i = 0; i < 2000; i++) {
    char k[16];
    snprintf(k, sizeof k, "k%d", i);
    CHECK(tpl_map_set(a, nm.u.map, k, strlen(k), tpl_value_int(i)) == 0);
    CHECK(tpl_list_push(a, nl.u.list, tpl_value_int(i)) == 0);
  }
  CHECK(tpl_arena_alloc(a, 200000) != NULL); /* a big block, kept behind the current chunk */
  CHECK(tpl_arena_used(a) > used + 200000);
  CHECK(tpl_arena_release(a, &m));
  CHECK_EQ_INT(tpl_arena_used(a), used);
  /* a new value stored into an older map: kept */
  m = tpl_arena_mark(a);
  tpl_value_t s = tpl_value_str_copy(a, "new", 3);
  CHECK(tpl_map_set(a, old.u.map, "k", 1, s) == 0);
  CHECK(!tpl_arena_release(a, &m));
  CHECK(tpl_arena_used(a) > used);
  tpl_value_t *got = tpl_map_get(old.u.map, "k", 1);
  CHECK(got && got->u.s.n == 3 && !memcmp(got->u.s.p, "new", 3));
  /* the next mark starts clean */
  used = tpl_arena_used(a);
  m = tpl_arena_mark(a);
  CHECK(tpl_value_str_copy(a, "tmp", 3).kind == TPL_STRING);
  CHECK(tpl_arena_release(a, &m));
  CHECK_EQ_INT(tpl_arena_used(a), used);
  /* a push onto an older list: kept */
  m = tpl_arena_mark(a);
  CHECK(tpl_list_push(a, ol.u.list, s) == 0);
  CHECK(!tpl_arena_release(a, &m));
  CHECK_EQ_INT(ol.u.list->len, 4);
  /* a push through a slice made after the mark lands in the older list's array: kept */
  static const tpl_func_t fns[] = {{"pushin", "a", push_in_place, NULL, NULL}};
  tpl_funcs_t *f = tpl_funcs_new();
  CHECK(f && tpl_funcs_add(f, fns, 1) == 0);
  tpl_set_t *set = tpl_set_new(f);
  buf_t out = BUF_INIT, err = BUF_INIT;
  CHECK(set && tpl_set_parse(set, "t", "{{ pushin (slice .l 0 1) }}{{ slice .l 0 2 }}", 46, &err) == 0);
  tpl_value_t ol2 = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
  for (int i = 0; i < 3; i++) tpl_list_push(a, ol2.u.list, tpl_value_int(i));
  tpl_value_t data = tpl_value_map_new(a, TPL_ELEM_ANY);
  tpl_map_set(a, data.u.map, "l", 1, ol2);
  m = tpl_arena_mark(a);
  tpl_exec_opts_t o = {0};
  CHECK(tpl_set_execute(set, "t", data, a, &o, &out, &err) == 0);
  CHECK(!tpl_arena_release(a, &m));
  CHECK(out.data && !strcmp(out.data, "[0 pushed]"));
  buf_free(&out);
  buf_free(&err);
  tpl_set_free(set);
  tpl_funcs_free(f);
  tpl_arena_free(a);
}

static void test_unicode(void) {
  CHECK(tpl_unicode_is_print('a'));
  CHECK(!tpl_unicode_is_print(0x378));
  CHECK(!tpl_unicode_is_print(0xAD));
  CHECK(tpl_unicode_is_print(0x1F600));
  CHECK(!tpl_unicode_is_print(0x3000));
  CHECK(tpl_unicode_is_letter(0x6F22));
  CHECK(!tpl_unicode_is_letter(0xB2));
  CHECK(tpl_unicode_is_digit(0x661));
  CHECK(tpl_unicode_is_space(0x85));
  CHECK_EQ_INT(tpl_unicode_to_upper(0xE9), 0xC9);
  CHECK_EQ_INT(tpl_unicode_to_lower(0x130), 0x69);
  CHECK_EQ_INT(tpl_unicode_to_title(0x1C6), 0x1C5);
}

int main(void) {
  test_deep_stack();
  test_append_cap();
  test_arena_mark();
  test_unicode();
  test_float_format();
  test_sprintf();
  test_render();
  test_limits();
  return t_done();
}
