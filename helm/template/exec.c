/* Execution of parsed templates with Go's text/template semantics: pipelines,
 * fields, variables, control structures, function calls with Go's argument
 * rules, the builtins, and Go's error wording and positions. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helm/template/tpl_internal.h"

#define TPL__BREAK 1
#define TPL__CONTINUE 2

typedef struct tpl__var_s {
  const char *name;
  size_t len;
  tpl_value_t val;
} tpl__var_t;

typedef struct tpl__exec_s {
  const tpl_set_t *set;
  tpl_arena_t *a;
  tpl_missingkey_t mk;
  buf_t *err;
  uint64_t steps, max_steps;
  uint64_t next_check; /* steps at which step() looks further: max_steps, or the budget's clock before it */
  size_t max_output;
  tpl_budget_t *budget;
  size_t pending; /* bytes of the unfinished texts of enclosing includes (counted against memory) */
  int max_depth;
  void *udata;
  bool (*resolve)(void *udata, const char *name, size_t len);
  struct worker_s *helper;
  tpl__stack_t stack; /* deep nesting continues on mmap'd segments */
  const char *root_name;
  tpl__var_t *vars;
  size_t nvars, vcap;
} tpl__exec_t;

typedef struct tpl__state_s {
  tpl__exec_t *x;
  const tpl_tree_t *tmpl;
  const tpl_node_t *node;
  buf_t *out;
  size_t out_max; /* out may not grow past this (the output limit, or the memory room for an include's text) */
  bool nested;    /* out is a value being built (an include's text), not the output */
  size_t vbase;
  int depth;
} tpl__state_t;

struct tpl_call_s {
  tpl__state_t *s;
  const tpl_func_t *fn;
  void *self;
  buf_t msg;
};

/* ---- errors ---- */

/* Where the running node is: its template's parse name, line and column (Go's ErrorContext). */
static const char *s_where(const tpl__state_t *s, int *line, size_t *col) {
  const tpl_tree_t *t = s->node->tree ? s->node->tree : s->tmpl;
  /* A tree of a text parsed again under another name has the first parse's nodes (tpl_set_parse):
   * the running tree says where they are. */
  if (s->tmpl && t != s->tmpl && t->root == s->tmpl->root) t = s->tmpl;
  size_t pos = s->node->pos;
  if (pos > t->text_len) pos = t->text_len;
  *line = 1;
  size_t last_nl = (size_t)-1;
  for (size_t i = 0; i < pos; i++)
    if (t->text[i] == '\n') {
      ++*line;
      last_nl = i;
    }
  *col = last_nl == (size_t)-1 ? pos : pos - (last_nl + 1);
  return t->parse_name;
}

static int s_verrorf(tpl__state_t *s, int rc, const char *fmt, va_list ap) {
  buf_t *e = s->x->err;
  buf_reset(e);
  if (!s->node) {
    buf_printf(e, "template: %s: ", s->tmpl->name);
  } else {
    int line;
    size_t col;
    const char *name = s_where(s, &line, &col);
    buf_printf(e, "template: %s:%d:%zu: executing ", name, line, col);
    tpl_fmt_quote(e, s->tmpl->name, strlen(s->tmpl->name));
    buf_puts(e, " at <");
    tpl__node_string(s->node, e);
    buf_puts(e, ">: ");
  }
  buf_vprintf(e, fmt, ap);
  return rc;
}

static int s_errorf(tpl__state_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int s_errorf(tpl__state_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = s_verrorf(s, TPL_EEXEC, fmt, ap);
  va_end(ap);
  return rc;
}

static int s_limitf(tpl__state_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int s_limitf(tpl__state_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = s_verrorf(s, TPL_ELIMIT, fmt, ap);
  va_end(ap);
  return rc;
}

/* The budget's limit `kind` is exceeded here (or was before): recorded with where, and reported as
 * a limit error. */
static int s_budget(tpl__state_t *s, int kind) {
  tpl_budget_t *b = s->x->budget;
  if (kind == TPL_BUDGET_MEMORY) tpl_arena_set_over(s->x->a);
  if (b && !b->hit) b->hit = kind;
  if (b) kind = b->hit;
  if (b && !b->where[0]) {
    if (s->node) {
      int line;
      size_t col;
      const char *name = s_where(s, &line, &col);
      snprintf(b->where, sizeof b->where, "%s:%d", name, line);
    } else {
      snprintf(b->where, sizeof b->where, "%s", s->tmpl->name);
    }
  }
  const char *what = kind == TPL_BUDGET_OUTPUT ? "output" : kind == TPL_BUDGET_TIME ? "time" : "memory";
  return s_limitf(s, "render budget exceeded: %s", what);
}

static int s_nomem(tpl__state_t *s) {
  if (tpl_arena_over_limit(s->x->a)) return s_budget(s, TPL_BUDGET_MEMORY);
  buf_reset(s->x->err);
  buf_puts(s->x->err, "template: out of memory");
  return TPL_ENOMEM;
}

/* The bound for a text printed outside the arena (tpl__fmt_*_max): the memory left, 0 without a limit. */
static size_t x_fmt_max(const tpl__exec_t *x) {
  size_t room = tpl_arena_room(x->a);
  if (room == SIZE_MAX) return 0;
  return room > x->pending + 1 ? room - x->pending : 1;
}

/* A print into b failed: b freed, the budget's error (TPL_ELIMIT) or out of memory. */
static int fmt_fail(tpl__state_t *s, buf_t *b, int rc) {
  buf_free(b);
  return rc == TPL_ELIMIT ? s_budget(s, TPL_BUDGET_MEMORY) : s_nomem(s);
}

/* A temporary C string of a value's Go type (arena). */
static const char *type_str(tpl__state_t *s, const tpl_value_t *v) {
  buf_t b = BUF_INIT;
  tpl_value_type_name(v, &b);
  char *r = tpl_arena_strndup(s->x->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r ? r : "?";
}

static const char *node_str(tpl__state_t *s, const tpl_node_t *n) {
  buf_t b = BUF_INIT;
  tpl__node_string(n, &b);
  char *r = tpl_arena_strndup(s->x->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r ? r : "?";
}

static const char *value_str(tpl__state_t *s, const tpl_value_t *v, const char *verb) {
  buf_t b = BUF_INIT;
  if (v->kind == TPL_INVALID && strcmp(verb, "%v") == 0) buf_puts(&b, "<invalid reflect.Value>");
  else tpl_fmt_sprintf(&b, verb, strlen(verb), v, 1);
  char *r = tpl_arena_strndup(s->x->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r ? r : "?";
}

static const char *quote_str(tpl__state_t *s, const char *p, size_t n) {
  buf_t b = BUF_INIT;
  tpl_fmt_quote(&b, p, n);
  char *r = tpl_arena_strndup(s->x->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r ? r : "?";
}

/* ---- variables ---- */

static int vars_push(tpl__state_t *s, const char *name, size_t len, tpl_value_t v) {
  tpl__exec_t *x = s->x;
  if (x->nvars == x->vcap) {
    size_t nc = x->vcap ? x->vcap * 2 : 16;
    tpl__var_t *nv = realloc(x->vars, nc * sizeof(*nv));
    if (!nv) return s_nomem(s);
    x->vars = nv;
    x->vcap = nc;
  }
  x->vars[x->nvars].name = name;
  x->vars[x->nvars].len = len;
  x->vars[x->nvars].val = v;
  x->nvars++;
  return 0;
}

static tpl__var_t *var_find(tpl__state_t *s, const char *name, size_t len) {
  /* names are short ("$", "$k"): their last byte first, then the rest */
  char last = name[len - 1];
  for (size_t i = s->x->nvars; i > s->vbase; i--) {
    tpl__var_t *v = &s->x->vars[i - 1];
    if (v->len == len && v->name[len - 1] == last &&
        (len == 1 || (v->name[0] == name[0] && (len == 2 || memcmp(v->name + 1, name + 1, len - 2) == 0))))
      return v;
  }
  return NULL;
}

/* ---- the engine ---- */

typedef struct tpl__val_s tpl__val_t;
static int eval_pipeline(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *pipe, tpl_value_t *out);
static int walk(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *n);
static int eval_arg(tpl__state_t *s, tpl_value_t dot, char typ, const tpl_node_t *n, tpl_value_t *out);
static int call_builtin(tpl__state_t *s, int id, tpl_value_t *args, size_t n, const tpl_node_t *cmd,
                        const tpl_node_t *const *argnodes, size_t nargnodes, const tpl_value_t *final,
                        tpl_value_t *out, buf_t *msg);

/* Steps between two looks at the budget's clock (a clock read costs about as much as a few steps). */
#define TPL__CHECK_EVERY 2048

static int step_slow(tpl__state_t *s) {
  tpl__exec_t *x = s->x;
  if (x->steps > x->max_steps)
    return s_limitf(s, "template execution exceeded %llu steps", (unsigned long long)x->max_steps);
  x->next_check = x->max_steps - x->steps > TPL__CHECK_EVERY ? x->steps + TPL__CHECK_EVERY : x->max_steps;
  if (tpl_budget_check(x->budget)) return s_budget(s, x->budget->hit);
  return 0;
}

static inline int step(tpl__state_t *s) {
  if (++s->x->steps > s->x->next_check) return step_slow(s);
  return 0;
}

/* out would grow past s->out_max. */
static int out_over(tpl__state_t *s) {
  if (s->nested ? tpl_arena_room(s->x->a) != SIZE_MAX : s->x->budget && s->x->budget->max_output)
    return s_budget(s, s->nested ? TPL_BUDGET_MEMORY : TPL_BUDGET_OUTPUT);
  return s_limitf(s, "template output exceeds %zu bytes", s->x->max_output);
}

/* Deep nesting continues on new stack segments (see tpl__stack_call). */
static int on_new_stack(tpl__state_t *s, int (*fn)(void *), void *arg) {
  int rc;
  int r = tpl__stack_call(&s->x->stack, fn, arg, &rc);
  if (r == TPL_ELIMIT)
    return s_limitf(s, "template nesting too deep (stack limit of %zu bytes exhausted)", s->x->stack.max);
  if (r) return s_nomem(s);
  return rc;
}

static bool stack_low(const tpl__exec_t *x) { return tpl__stack_low(&x->stack); }

typedef struct tpl__walk_args_s {
  tpl__state_t *s;
  tpl_value_t dot;
  const tpl_node_t *n;
  tpl_value_t *out;
} tpl__walk_args_t;

static int walk_tramp(void *p) {
  tpl__walk_args_t *a = p;
  return walk(a->s, a->dot, a->n);
}

static int eval_pipeline_tramp(void *p) {
  tpl__walk_args_t *a = p;
  return eval_pipeline(a->s, a->dot, a->n, a->out);
}

static int emit(tpl__state_t *s, const char *p, size_t n) {
  buf_t *o = s->out;
  if (o->len + n > s->out_max) return out_over(s);
  if (n <= 16 && o->len + n + 1 <= o->cap) {
    /* most texts between actions and most values are short: two overlapping word moves (inside
     * the n bytes), not a memcpy call (buf_append's, kept generic: callers with small fixed arrays
     * would trip the compiler's bounds checks) */
    char *d = o->data + o->len;
    if (n >= 8) {
      uint64_t a, b;
      memcpy(&a, p, 8);
      memcpy(&b, p + n - 8, 8);
      memcpy(d, &a, 8);
      memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      memcpy(&a, p, 4);
      memcpy(&b, p + n - 4, 4);
      memcpy(d, &a, 4);
      memcpy(d + n - 4, &b, 4);
    } else {
      for (size_t i = 0; i < n; i++) d[i] = p[i];
    }
    o->len += n;
    d[n] = 0;
    return 0;
  }
  if (buf_append(o, p, n)) return s_nomem(s);
  return 0;
}

static const char *param_type_name(char t) {
  switch (t) {
  case 'a': return "interface {}";
  case 'v': return "reflect.Value";
  case 's': return "string";
  case 'i': return "int";
  case 'I': return "int64";
  case 'f': return "float64";
  case 'b': return "bool";
  case 'l': return "[]interface {}";
  case 'm': return "map[string]interface {}";
  case 'L': return "[]string";
  case 'w': return "io.Writer";
  case 'u': return "uint32";
  case 'T': return "time.Time";
  case 'C': return "sprig.certificate";
  }
  return "?";
}

static bool param_can_be_nil(char t) { return t == 'a' || t == 'v' || t == 'l' || t == 'm' || t == 'L' || t == 'w'; }

static tpl_value_t zero_of_param(char t) {
  tpl_value_t v = {0};
  switch (t) {
  case 'a':
  case 'w': v.kind = TPL_NIL; break;
  case 'l': v.kind = TPL_LIST; v.elem = TPL_ELEM_ANY; break;
  case 'L': v.kind = TPL_LIST; v.elem = TPL_ELEM_STRING; break;
  case 'm': v.kind = TPL_MAP; v.elem = TPL_ELEM_ANY; break;
  default: break; /* 'v': the zero reflect.Value */
  }
  return v;
}

static bool assignable(const tpl_value_t *v, char t) {
  switch (t) {
  case 'a': case 'v': return true;
  case 's': return v->kind == TPL_STRING;
  case 'i': return v->kind == TPL_INT;
  case 'I': return v->kind == TPL_INT64;
  case 'f': return v->kind == TPL_FLOAT64;
  case 'b': return v->kind == TPL_BOOL;
  case 'l': return v->kind == TPL_LIST && v->elem == TPL_ELEM_ANY;
  case 'L': return v->kind == TPL_LIST && v->elem == TPL_ELEM_STRING;
  case 'm': return v->kind == TPL_MAP && v->elem == TPL_ELEM_ANY;
  case 'T':
  case 'C': /* host struct types: exactly that type */
    return v->kind == TPL_OBJECT && !strcmp(v->u.obj->type->name, param_type_name(t));
  case 'u': return false; /* no template value is a uint32; constants are converted in eval_arg */
  }
  return false;
}

/* Go's state.validateType; typ 0 means "no type" (chain receivers). */
static int validate_type_slow(tpl__state_t *s, tpl_value_t v, char typ, tpl_value_t *out);
static inline int validate_type(tpl__state_t *s, tpl_value_t v, char typ, tpl_value_t *out) {
  if (v.kind != TPL_INVALID && (typ == 'a' || typ == 'v' || typ == 0)) { /* any value as it is (most) */
    *out = v;
    return 0;
  }
  return validate_type_slow(s, v, typ, out);
}

static int validate_type_slow(tpl__state_t *s, tpl_value_t v, char typ, tpl_value_t *out) {
  if (v.kind == TPL_INVALID) {
    if (typ == 0) { *out = v; return 0; }
    if (param_can_be_nil(typ)) { *out = zero_of_param(typ); return 0; }
    return s_errorf(s, "invalid value; expected %s", param_type_name(typ));
  }
  if (typ == 0 || assignable(&v, typ)) {
    *out = v;
    /* A named map or slice passed as map[string]interface{} or []T is seen unnamed from then on
     * (a function returning its argument returns the unnamed type). */
    if (typ == 'm' || typ == 'l' || typ == 'L') out->view = TPL_VIEW_PLAIN;
    return 0;
  }
  if (v.kind == TPL_NIL) return s_errorf(s, "wrong type for value; expected %s; got interface {}", param_type_name(typ));
  return s_errorf(s, "wrong type for value; expected %s; got %s", param_type_name(typ), type_str(s, &v));
}

static bool is_hex_int(const char *t, size_t n) {
  return n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && !memchr(t, 'p', n) && !memchr(t, 'P', n);
}

/* Go's state.idealConstant: the syntax decides the type of a constant. */
static int ideal_constant(tpl__state_t *s, const tpl_node_t *c, tpl_value_t *out) {
  s->node = c;
  if (c->num & TPL_NUM_COMPLEX) {
    *out = tpl_value_complex(c->cre, c->cim);
    return 0;
  }
  bool has_fchars = false;
  for (size_t i = 0; i < c->slen && !has_fchars; i++) {
    char ch = c->str[i];
    has_fchars = ch == '.' || ch == 'e' || ch == 'E' || ch == 'p' || ch == 'P';
  }
  if ((c->num & TPL_NUM_FLOAT) && !is_hex_int(c->str, c->slen) && !(c->slen && c->str[0] == '\'') && has_fchars) {
    *out = tpl_value_float(c->f);
    return 0;
  }
  if (c->num & TPL_NUM_INT) {
    *out = tpl_value_int(c->i);
    return 0;
  }
  if (c->num & TPL_NUM_UINT) return s_errorf(s, "%.*s overflows int", (int)c->slen, c->str);
  *out = tpl_value_invalid();
  return 0;
}

static int not_a_function(tpl__state_t *s, const tpl_node_t *const *args, size_t nargs, const tpl_value_t *final) {
  if (nargs > 1 || final) return s_errorf(s, "can't give argument to non-function %s", node_str(s, args[0]));
  return 0;
}

static int eval_call(tpl__state_t *s, tpl_value_t dot, const tpl_func_t *fn, int builtin, const tpl_node_t *node,
                     const char *name, size_t nlen, const tpl_node_t *const *args, size_t nargs,
                     const tpl_value_t *final, void *self, tpl_value_t *out);

static tpl_value_t zero_of_elem(uint8_t elem) { return tpl__zero_of_elem(elem); }

static int eval_field(tpl__state_t *s, tpl_value_t dot, const char *fname, size_t flen, const tpl_node_t *node,
                      const tpl_node_t *const *args, size_t nargs, const tpl_value_t *final, tpl_value_t recv,
                      tpl_value_t *out) {
  if (recv.kind == TPL_INVALID) {
    if (s->x->mk == TPL_MISSINGKEY_ERROR) return s_errorf(s, "nil data; no entry for key %s", quote_str(s, fname, flen));
    *out = tpl_value_invalid();
    return 0;
  }
  if (recv.kind == TPL_NIL) return s_errorf(s, "nil pointer evaluating interface {}.%.*s", (int)flen, fname);
  bool has_args = nargs > 1 || final;
  if (recv.kind == TPL_OBJECT) {
    const tpl_type_t *t = recv.u.obj->type;
    char *nm = tpl_arena_strndup(s->x->a, fname, flen);
    if (!nm) return s_nomem(s);
    if (t->method) {
      const tpl_func_t *m = t->method(recv.u.obj->self, nm);
      if (m) return eval_call(s, dot, m, -1, node, fname, flen, args, nargs, final, recv.u.obj->self, out);
    }
    if (t->field) {
      int r = t->field(recv.u.obj->self, nm, out);
      if (r < 0) return s_errorf(s, "error evaluating field %s", nm);
      if (r > 0) {
        if (has_args) return s_errorf(s, "%s has arguments but cannot be invoked as function", nm);
        return 0;
      }
    }
    return s_errorf(s, "can't evaluate field %s in type %s", nm, t->name);
  }
  /* A named map or slice type: Go looks for a method first (methods win over keys). */
  const tpl_type_t *nt = tpl_value_named(&recv);
  if (nt && nt->method) {
    char *nm = tpl_arena_strndup(s->x->a, fname, flen);
    if (!nm) return s_nomem(s);
    void *self = recv.kind == TPL_MAP ? (void *)recv.u.map : (void *)recv.u.list;
    const tpl_func_t *m = nt->method(self, nm);
    if (m) return eval_call(s, dot, m, -1, node, fname, flen, args, nargs, final, self, out);
  }
  if (recv.kind == TPL_MAP) {
    if (has_args) return s_errorf(s, "%.*s is not a method but has arguments", (int)flen, fname);
    tpl_value_t *v = tpl_map_get(recv.u.map, fname, flen);
    if (v) {
      *out = *v;
      out->iface = recv.elem == TPL_ELEM_ANY;
      return 0;
    }
    switch (s->x->mk) {
    case TPL_MISSINGKEY_DEFAULT: *out = tpl_value_invalid(); return 0;
    case TPL_MISSINGKEY_ZERO:
      *out = zero_of_elem(recv.elem);
      out->iface = recv.elem == TPL_ELEM_ANY;
      return 0;
    case TPL_MISSINGKEY_ERROR: return s_errorf(s, "map has no entry for key %s", quote_str(s, fname, flen));
    }
  }
  return s_errorf(s, "can't evaluate field %.*s in type %s", (int)flen, fname,
                  recv.iface ? "interface {}" : type_str(s, &recv));
}

static int eval_field_chain(tpl__state_t *s, tpl_value_t dot, tpl_value_t recv, const tpl_node_t *node,
                            const char *const *idents, const size_t *ilens, size_t n, const tpl_node_t *const *args,
                            size_t nargs, const tpl_value_t *final, tpl_value_t *out) {
  for (size_t i = 0; i + 1 < n; i++) {
    int rc = eval_field(s, dot, idents[i], ilens[i], node, NULL, 0, NULL, recv, &recv);
    if (rc) return rc;
  }
  return eval_field(s, dot, idents[n - 1], ilens[n - 1], node, args, nargs, final, recv, out);
}

static int eval_field_node(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *f, const tpl_node_t *const *args,
                           size_t nargs, const tpl_value_t *final, tpl_value_t *out) {
  s->node = f;
  return eval_field_chain(s, dot, dot, f, f->idents, f->ilens, f->nidents, args, nargs, final, out);
}

static int eval_variable_node(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *v, const tpl_node_t *const *args,
                              size_t nargs, const tpl_value_t *final, tpl_value_t *out) {
  s->node = v;
  tpl__var_t *var = var_find(s, v->idents[0], v->ilens[0]);
  if (!var) return s_errorf(s, "undefined variable: %.*s", (int)v->ilens[0], v->idents[0]);
  if (v->nidents == 1) {
    int rc = not_a_function(s, args, nargs, final);
    if (rc) return rc;
    *out = var->val;
    return 0;
  }
  return eval_field_chain(s, dot, var->val, v, v->idents + 1, v->ilens + 1, v->nidents - 1, args, nargs, final, out);
}

static int eval_chain_node(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *c, const tpl_node_t *const *args,
                           size_t nargs, const tpl_value_t *final, tpl_value_t *out) {
  s->node = c;
  if (c->node->type == TPL_N_NIL) return s_errorf(s, "indirection through explicit nil in %s", node_str(s, c));
  tpl_value_t recv;
  int rc = eval_arg(s, dot, 0, c->node, &recv);
  if (rc) return rc;
  return eval_field_chain(s, dot, recv, c, c->idents, c->ilens, c->nidents, args, nargs, final, out);
}

static int eval_function(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *id, const tpl_node_t *cmd,
                         const tpl_node_t *const *args, size_t nargs, const tpl_value_t *final, tpl_value_t *out) {
  s->node = id;
  const tpl_func_t *fn = id->fn;
  int b = id->builtin;
  const tpl_funcs_t *funcs = tpl__set_funcs(s->x->set);
  if (!fn && b < 0 && funcs) fn = tpl_funcs_find(funcs, id->str, id->slen);
  if (!fn && b < 0) return s_errorf(s, "%s is not a defined function", quote_str(s, id->str, id->slen));
  return eval_call(s, dot, fn, fn ? -1 : b, cmd, id->str, id->slen, args, nargs, final, NULL, out);
}

static int eval_empty_interface(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *n, tpl_value_t *out) {
  s->node = n;
  switch (n->type) {
  case TPL_N_BOOL: *out = tpl_value_bool(n->flag); return 0;
  case TPL_N_NUMBER: return ideal_constant(s, n, out);
  case TPL_N_STRING: *out = tpl_value_strn(n->str, n->slen); return 0;
  case TPL_N_NIL: return s_errorf(s, "evalEmptyInterface: nil (can't happen)");
  default: break;
  }
  (void)dot;
  return s_errorf(s, "can't handle assignment of %s to empty interface argument", node_str(s, n));
}

static int eval_arg(tpl__state_t *s, tpl_value_t dot, char typ, const tpl_node_t *n, tpl_value_t *out) {
  s->node = n;
  tpl_value_t v;
  int rc;
  switch (n->type) {
  case TPL_N_DOT: return validate_type(s, dot, typ, out);
  case TPL_N_NIL:
    if (param_can_be_nil(typ)) {
      *out = zero_of_param(typ);
      return 0;
    }
    return s_errorf(s, "cannot assign nil to %s", param_type_name(typ));
  case TPL_N_FIELD:
    rc = eval_field_node(s, dot, n, &n, 1, NULL, &v);
    return rc ? rc : validate_type(s, v, typ, out);
  case TPL_N_VARIABLE:
    rc = eval_variable_node(s, dot, n, NULL, 0, NULL, &v);
    return rc ? rc : validate_type(s, v, typ, out);
  case TPL_N_PIPE:
    rc = eval_pipeline(s, dot, n, &v);
    return rc ? rc : validate_type(s, v, typ, out);
  case TPL_N_IDENT:
    rc = eval_function(s, dot, n, n, NULL, 0, NULL, &v);
    return rc ? rc : validate_type(s, v, typ, out);
  case TPL_N_CHAIN:
    rc = eval_chain_node(s, dot, n, NULL, 0, NULL, &v);
    return rc ? rc : validate_type(s, v, typ, out);
  default: break;
  }
  switch (typ) {
  case 'b':
    if (n->type == TPL_N_BOOL) {
      *out = tpl_value_bool(n->flag);
      return 0;
    }
    return s_errorf(s, "expected bool; found %s", node_str(s, n));
  case 'f':
    if (n->type == TPL_N_NUMBER && (n->num & TPL_NUM_FLOAT)) {
      *out = tpl_value_float(n->f);
      return 0;
    }
    return s_errorf(s, "expected float; found %s", node_str(s, n));
  case 'i':
  case 'I':
    if (n->type == TPL_N_NUMBER && (n->num & TPL_NUM_INT)) {
      *out = typ == 'i' ? tpl_value_int(n->i) : tpl_value_int64(n->i);
      return 0;
    }
    return s_errorf(s, "expected integer; found %s", node_str(s, n));
  case 'a':
  case 'v': return eval_empty_interface(s, dot, n, out);
  case 's':
    if (n->type == TPL_N_STRING) {
      *out = tpl_value_strn(n->str, n->slen);
      return 0;
    }
    return s_errorf(s, "expected string; found %s", node_str(s, n));
  case 'u': /* Go's evalUnsignedInteger; reflect's SetUint truncates to the parameter's 32 bits */
    if (n->type == TPL_N_NUMBER && (n->num & TPL_NUM_UINT)) {
      *out = tpl_value_uint64((uint32_t)n->u);
      return 0;
    }
    return s_errorf(s, "expected unsigned integer; found %s", node_str(s, n));
  }
  return s_errorf(s, "can't handle %s for arg of type %s", node_str(s, n), param_type_name(typ));
}

typedef struct tpl__sig_s {
  const char *p; /* parameter letters without '*' */
  size_t n;
  bool variadic;
} tpl__sig_t;

static tpl__sig_t parse_sig(const char *sig) {
  size_t n = 0;
  while (sig[n]) n++; /* a few letters */
  tpl__sig_t g = {sig, n, false};
  if (g.n && sig[g.n - 1] == '*') {
    g.n--;
    g.variadic = true;
  }
  return g;
}

static bool value_truth(const tpl_value_t *v) { return tpl_value_truth(v); }

static int eval_call(tpl__state_t *s, tpl_value_t dot, const tpl_func_t *fn, int builtin, const tpl_node_t *node,
                     const char *name, size_t nlen, const tpl_node_t *const *args, size_t nargs,
                     const tpl_value_t *final, void *self, tpl_value_t *out) {
  const tpl_node_t *const *argv_nodes = NULL;
  size_t nav = 0;
  if (args) {
    argv_nodes = args + 1;
    nav = nargs - 1;
  }
  tpl__sig_t g = parse_sig(fn ? fn->sig : tpl__builtin_sigs[builtin]);
  size_t num_in = nav + (final ? 1 : 0);
  size_t num_fixed = nav;
  if (g.variadic) {
    num_fixed = g.n - 1;
    if (num_in < num_fixed)
      return s_errorf(s, "wrong number of args for %.*s: want at least %zu got %zu", (int)nlen, name, g.n - 1, nav);
  } else if (num_in != g.n) {
    return s_errorf(s, "wrong number of args for %.*s: want %zu got %zu", (int)nlen, name, g.n, num_in);
  }
  int rc;
  if (builtin == TPL_B_AND || builtin == TPL_B_OR) {
    tpl_value_t v = tpl_value_invalid();
    for (size_t i = 0; i < nav; i++) {
      rc = eval_arg(s, dot, 'v', argv_nodes[i], &v);
      if (rc) return rc;
      if (value_truth(&v) == (builtin == TPL_B_OR)) {
        *out = v;
        return 0;
      }
    }
    if (final) {
      rc = validate_type(s, *final, 'v', &v);
      if (rc) return rc;
    }
    *out = v;
    return 0;
  }
  tpl_value_t small[8];
  tpl_value_t *argv = num_in <= 8 ? small : tpl_arena_alloc(s->x->a, num_in * sizeof(tpl_value_t));
  if (!argv) return s_nomem(s);
  size_t i = 0;
  for (; i < num_fixed && i < nav; i++) {
    rc = eval_arg(s, dot, g.p[i], argv_nodes[i], &argv[i]);
    if (rc) return rc;
  }
  if (g.variadic) {
    char vt = g.p[g.n - 1];
    for (; i < nav; i++) {
      rc = eval_arg(s, dot, vt, argv_nodes[i], &argv[i]);
      if (rc) return rc;
    }
  }
  if (final) {
    char t = g.n ? g.p[g.n - 1] : 'a';
    if (g.variadic && num_in - 1 < num_fixed) t = g.p[num_in - 1];
    rc = validate_type(s, *final, t, &argv[i]);
    if (rc) return rc;
  }
  tpl_call_t call = {.s = s, .fn = fn, .self = self, .msg = BUF_INIT};
  if (fn) {
    rc = fn->fn(&call, argv, num_in, out);
  } else {
    rc = call_builtin(s, builtin, argv, num_in, node, argv_nodes, nav, final, out, &call.msg);
  }
  if (rc) {
    if (rc == TPL_ENOMEM && !call.msg.len) {
      buf_free(&call.msg);
      return s_nomem(s);
    }
    if (rc == TPL_ELIMIT) {
      /* A nested execution hit a limit: its message stands as is. */
      buf_reset(s->x->err);
      buf_append(s->x->err, call.msg.data ? call.msg.data : "", call.msg.len);
      buf_free(&call.msg);
      return TPL_ELIMIT;
    }
    s->node = node;
    rc = s_errorf(s, "error calling %.*s: %s", (int)nlen, name, call.msg.data ? call.msg.data : "");
    buf_free(&call.msg);
    return rc;
  }
  buf_free(&call.msg);
  return 0;
}

static int eval_command(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *cmd, const tpl_value_t *final,
                        tpl_value_t *out) {
  int rc = step(s);
  if (rc) return rc;
  const tpl_node_t *first = cmd->kids.v[0];
  const tpl_node_t *const *args = (const tpl_node_t *const *)cmd->kids.v;
  size_t nargs = cmd->kids.n;
  switch (first->type) {
  case TPL_N_FIELD: return eval_field_node(s, dot, first, args, nargs, final, out);
  case TPL_N_CHAIN: return eval_chain_node(s, dot, first, args, nargs, final, out);
  case TPL_N_IDENT: return eval_function(s, dot, first, cmd, args, nargs, final, out);
  case TPL_N_PIPE:
    rc = not_a_function(s, args, nargs, final);
    return rc ? rc : eval_pipeline(s, dot, first, out);
  case TPL_N_VARIABLE: return eval_variable_node(s, dot, first, args, nargs, final, out);
  default: break;
  }
  s->node = first;
  rc = not_a_function(s, args, nargs, final);
  if (rc) return rc;
  switch (first->type) {
  case TPL_N_BOOL: *out = tpl_value_bool(first->flag); return 0;
  case TPL_N_DOT: *out = dot; return 0;
  case TPL_N_NIL: return s_errorf(s, "nil is not a command");
  case TPL_N_NUMBER: return ideal_constant(s, first, out);
  case TPL_N_STRING: *out = tpl_value_strn(first->str, first->slen); return 0;
  default: break;
  }
  return s_errorf(s, "can't evaluate command %s", quote_str(s, "", 0));
}

static int eval_pipeline(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *pipe, tpl_value_t *out) {
  if (stack_low(s->x)) {
    tpl__walk_args_t a = {s, dot, pipe, out};
    return on_new_stack(s, eval_pipeline_tramp, &a);
  }
  *out = tpl_value_invalid();
  if (!pipe) return 0;
  s->node = pipe;
  tpl_value_t v = tpl_value_invalid();
  bool have = false;
  for (size_t i = 0; i < pipe->kids.n; i++) {
    tpl_value_t nv;
    int rc = eval_command(s, dot, pipe->kids.v[i], have ? &v : NULL, &nv);
    if (rc) return rc;
    if (nv.kind == TPL_NIL) nv = tpl_value_invalid(); /* a nil interface{} becomes no value */
    nv.iface = 0;
    v = nv;
    have = true;
  }
  for (size_t i = 0; i < pipe->decl.n; i++) {
    const tpl_node_t *d = pipe->decl.v[i];
    if (pipe->flag) {
      tpl__var_t *var = var_find(s, d->idents[0], d->ilens[0]);
      if (!var) return s_errorf(s, "undefined variable: %.*s", (int)d->ilens[0], d->idents[0]);
      var->val = v;
    } else {
      int rc = vars_push(s, d->idents[0], d->ilens[0], v);
      if (rc) return rc;
    }
  }
  *out = v;
  return 0;
}

static int print_value(tpl__state_t *s, const tpl_node_t *n, const tpl_value_t *v) {
  s->node = n;
  if (v->kind == TPL_STRING) return emit(s, v->u.s.p, v->u.s.n); /* fmt prints a string as it is */
  if (v->kind == TPL_INVALID) return emit(s, "<no value>", 10);
  if (v->kind == TPL_FUNC) return s_errorf(s, "can't print %s of type %s", node_str(s, n), type_str(s, v));
  size_t before = s->out->len;
  int rc0;
  /* Go's printableValue takes the address of an addressable value whose pointer type has String()
   * ({{ .Capabilities.KubeVersion }}): the type answers the reserved field name "*String" with
   * that text. */
  tpl_value_t str = {0};
  if (v->kind == TPL_OBJECT && !v->u.obj->type->format && v->u.obj->type->field &&
      v->u.obj->type->field(v->u.obj->self, "*String", &str) == 1 && str.kind == TPL_STRING) {
    int rc = emit(s, str.u.s.p, str.u.s.n);
    if (rc) return rc;
  } else if ((rc0 = tpl__fmt_value_max(s->out, v, s->out_max))) {
    if (rc0 != TPL_ELIMIT) return s_nomem(s);
    s->out->len = before;
    s->out->data[before] = 0;
    return out_over(s);
  }
  /* Go's printableValue indirects a pointer first: {{ .Capabilities }} prints the struct without
   * the "&" that fmt gives a pointer to a struct without String(). */
  if (v->kind == TPL_OBJECT && v->u.obj->type->name[0] == '*' && !v->u.obj->type->format &&
      s->out->len > before && s->out->data[before] == '&') {
    memmove(s->out->data + before, s->out->data + before + 1, s->out->len - before - 1);
    s->out->len--;
    s->out->data[s->out->len] = 0;
  }
  if (s->out->len > s->out_max) {
    s->out->len = before;
    s->out->data[before] = 0;
    return out_over(s);
  }
  return 0;
}

static int walk_if_with(tpl__state_t *s, bool is_with, tpl_value_t dot, const tpl_node_t *n) {
  size_t mark = s->x->nvars;
  tpl_value_t val;
  int rc = eval_pipeline(s, dot, n->pipe, &val);
  if (!rc) {
    if (value_truth(&val)) rc = walk(s, is_with ? val : dot, n->list);
    else if (n->else_list) rc = walk(s, dot, n->else_list);
  }
  s->x->nvars = mark;
  return rc;
}

static int range_iter(tpl__state_t *s, const tpl_node_t *r, size_t mark, tpl_value_t index, tpl_value_t elem) {
  const tpl_node_t *p = r->pipe;
  size_t nd = p->decl.n;
  if (nd > 0) {
    if (p->flag) {
      const tpl_node_t *d = p->decl.v[0];
      tpl__var_t *v = var_find(s, d->idents[0], d->ilens[0]);
      if (!v) return s_errorf(s, "undefined variable: %.*s", (int)d->ilens[0], d->idents[0]);
      v->val = nd > 1 ? index : elem;
    } else {
      s->x->vars[s->x->nvars - 1].val = elem;
    }
  }
  if (nd > 1) {
    if (p->flag) {
      const tpl_node_t *d = p->decl.v[1];
      tpl__var_t *v = var_find(s, d->idents[0], d->ilens[0]);
      if (!v) return s_errorf(s, "undefined variable: %.*s", (int)d->ilens[0], d->idents[0]);
      v->val = elem;
    } else {
      s->x->vars[s->x->nvars - 2].val = index;
    }
  }
  int rc = walk(s, elem, r->list);
  s->x->nvars = mark;
  if (rc == TPL__CONTINUE) rc = 0;
  return rc;
}

static int walk_range(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *r) {
  s->node = r;
  size_t outer = s->x->nvars;
  tpl_value_t val;
  int rc = eval_pipeline(s, dot, r->pipe, &val);
  if (rc) return rc;
  size_t mark = s->x->nvars;
  bool ran = false;
  switch (val.kind) {
  case TPL_INT:
  case TPL_INT64:
  case TPL_UINT64: {
    if (r->pipe->decl.n > 1) {
      rc = s_errorf(s, "can't use %s to iterate over more than one variable", value_str(s, &val, "%v"));
      break;
    }
    int64_t n = val.kind == TPL_UINT64 ? (int64_t)(val.u.u > INT64_MAX ? INT64_MAX : val.u.u) : val.u.i;
    for (int64_t i = 0; i < n && !rc; i++) {
      tpl_value_t e = val;
      if (e.kind == TPL_UINT64) e.u.u = (uint64_t)i;
      else e.u.i = i;
      ran = true;
      rc = range_iter(s, r, mark, tpl_value_invalid(), e);
    }
    break;
  }
  case TPL_LIST: {
    tpl_list_t *l = val.u.list;
    for (size_t i = 0; l && i < l->len && !rc; i++) {
      ran = true;
      tpl_value_t e = tpl_list_at(l, i);
      e.iface = val.elem == TPL_ELEM_ANY;
      rc = range_iter(s, r, mark, tpl_value_int((int64_t)i), e);
    }
    break;
  }
  case TPL_MAP: {
    if (!val.u.map || !val.u.map->len) break;
    const tpl_map_entry_t **es = tpl_map_sorted(s->x->a, val.u.map);
    if (!es) {
      rc = s_nomem(s);
      break;
    }
    size_t n = val.u.map->len;
    for (size_t i = 0; i < n && !rc; i++) {
      ran = true;
      tpl_value_t e = es[i]->val;
      e.iface = val.elem == TPL_ELEM_ANY;
      rc = range_iter(s, r, mark, tpl_value_strn(es[i]->key, es[i]->klen), e);
    }
    break;
  }
  case TPL_INVALID: break;
  default: rc = s_errorf(s, "range can't iterate over %s", value_str(s, &val, "%v"));
  }
  if (rc == TPL__BREAK) rc = 0;
  if (!rc && !ran && r->else_list) {
    rc = walk(s, dot, r->else_list);
    /* Go recovers walkBreak in walkRange itself, so a {{break}} in the else
     * list (which the parser lets refer to an outer range) ends only this
     * range; a {{continue}} still reaches the outer iteration. */
    if (rc == TPL__BREAK) rc = 0;
  }
  s->x->nvars = outer;
  return rc;
}

static int run_template(tpl__state_t *parent, const tpl_tree_t *t, tpl_value_t dot, buf_t *out, size_t out_max,
                        bool nested, int depth) {
  tpl__state_t ns = {.x = parent->x, .tmpl = t, .node = NULL, .out = out, .out_max = out_max, .nested = nested,
                     .vbase = parent->x->nvars, .depth = depth};
  size_t mark = parent->x->nvars;
  int rc = vars_push(&ns, "$", 1, dot);
  if (!rc) rc = walk(&ns, dot, t->root);
  parent->x->nvars = mark;
  return rc;
}

/* The template called name, asking the host's resolver when the set has none. */
static const tpl_tree_t *x_lookup(tpl__exec_t *x, const char *name, size_t len) {
  const tpl_tree_t *t = tpl__set_lookup(x->set, name, len);
  if (!t && x->resolve && x->resolve(x->udata, name, len)) t = tpl__set_lookup(x->set, name, len);
  return t;
}

static int walk_template(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *n) {
  s->node = n;
  const tpl_tree_t *t = x_lookup(s->x, n->str, n->slen);
  if (!t) return s_errorf(s, "template %s not defined", quote_str(s, n->str, n->slen));
  if (s->depth >= s->x->max_depth) return s_errorf(s, "exceeded maximum template depth (%d)", s->x->max_depth);
  tpl_value_t nd;
  int rc = eval_pipeline(s, dot, n->pipe, &nd);
  if (rc) return rc;
  return run_template(s, t, nd, s->out, s->out_max, s->nested, s->depth + 1);
}

static int walk(tpl__state_t *s, tpl_value_t dot, const tpl_node_t *n) {
  if (stack_low(s->x)) {
    tpl__walk_args_t a = {s, dot, n, NULL};
    return on_new_stack(s, walk_tramp, &a);
  }
  s->node = n;
  int rc = step(s);
  if (rc) return rc;
  switch (n->type) {
  case TPL_N_ACTION: {
    tpl_value_t v;
    rc = eval_pipeline(s, dot, n->pipe, &v);
    if (rc) return rc;
    if (n->pipe->decl.n == 0) return print_value(s, n, &v);
    return 0;
  }
  case TPL_N_BREAK: return TPL__BREAK;
  case TPL_N_CONTINUE: return TPL__CONTINUE;
  case TPL_N_COMMENT: return 0;
  case TPL_N_IF: return walk_if_with(s, false, dot, n);
  case TPL_N_WITH: return walk_if_with(s, true, dot, n);
  case TPL_N_LIST:
    for (size_t i = 0; i < n->kids.n; i++) {
      rc = walk(s, dot, n->kids.v[i]);
      if (rc) return rc;
    }
    return 0;
  case TPL_N_RANGE: return walk_range(s, dot, n);
  case TPL_N_TEMPLATE: return walk_template(s, dot, n);
  case TPL_N_TEXT: return emit(s, n->str, n->slen);
  default: return s_errorf(s, "unknown node: %s", node_str(s, n));
  }
}

/* ---- host-function API ---- */

int tpl_call_errorf(tpl_call_t *call, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_reset(&call->msg);
  buf_vprintf(&call->msg, fmt, ap);
  va_end(ap);
  return TPL_EEXEC;
}

tpl_arena_t *tpl_call_arena(tpl_call_t *call) { return call->s->x->a; }
void *tpl_call_udata(tpl_call_t *call) { return call->fn ? call->fn->udata : NULL; }
void *tpl_call_self(tpl_call_t *call) { return call->self; }
const tpl_funcs_t *tpl__call_funcs(tpl_call_t *call) { return tpl__set_funcs(call->s->x->set); }
void *tpl_call_exec_udata(tpl_call_t *call) { return call->s->x->udata; }
struct worker_s *tpl_call_helper(tpl_call_t *call) { return call->s->x->helper; }

uint64_t tpl_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tpl_budget_check(tpl_budget_t *b) {
  if (!b) return 0;
  if (!b->hit && b->deadline_ns && tpl_now_ns() >= b->deadline_ns) b->hit = TPL_BUDGET_TIME;
  return b->hit ? TPL_ELIMIT : 0;
}

/* A limit error for the call: the message as the execution reports it, in the call's error. */
static int call_limit(tpl_call_t *call, int kind) {
  tpl__state_t *s = call->s;
  s_budget(s, kind);
  buf_reset(&call->msg);
  buf_append(&call->msg, s->x->err->data ? s->x->err->data : "", s->x->err->len);
  buf_reset(s->x->err);
  return TPL_ELIMIT;
}

int tpl_call_check(tpl_call_t *call) {
  tpl__exec_t *x = call->s->x;
  if (tpl_arena_over_limit(x->a)) return call_limit(call, TPL_BUDGET_MEMORY);
  if (tpl_budget_check(x->budget)) return call_limit(call, x->budget->hit);
  return 0;
}

size_t tpl_call_room(tpl_call_t *call) {
  tpl__exec_t *x = call->s->x;
  size_t room = tpl_arena_room(x->a);
  if (room == SIZE_MAX) return room;
  return room > x->pending ? room - x->pending : 0;
}

int tpl_call_reserve(tpl_call_t *call, size_t n) {
  int rc = tpl_call_check(call);
  if (rc) return rc;
  if (n > tpl_call_room(call)) return call_limit(call, TPL_BUDGET_MEMORY);
  return 0;
}

int tpl_call_execute(tpl_call_t *call, const char *name, tpl_value_t data, buf_t *out) {
  tpl__state_t *s = call->s;
  const tpl_tree_t *t = x_lookup(s->x, name, strlen(name));
  if (!t) {
    buf_t q1 = BUF_INIT, q2 = BUF_INIT;
    tpl_fmt_quote(&q1, name, strlen(name));
    tpl_fmt_quote(&q2, s->x->root_name, strlen(s->x->root_name));
    tpl_call_errorf(call, "template: no template %s associated with template %s", q1.data ? q1.data : "",
                    q2.data ? q2.data : "");
    buf_free(&q1);
    buf_free(&q2);
    return TPL_EEXEC;
  }
  tpl__state_t saved = *s;
  /* The text is a value: it may take what memory is left (without a memory limit, the output's). */
  tpl__exec_t *x = s->x;
  size_t add = s->nested ? s->out->len : 0, room = tpl_arena_room(x->a);
  size_t max = room == SIZE_MAX ? x->max_output : room > x->pending + add ? room - x->pending - add : 0;
  x->pending += add;
  int rc = run_template(s, t, data, out, out->len + max < out->len ? SIZE_MAX : out->len + max, true, 0);
  x->pending -= add;
  *s = saved;
  if (rc) {
    buf_reset(&call->msg);
    buf_append(&call->msg, s->x->err->data ? s->x->err->data : "", s->x->err->len);
    buf_reset(s->x->err);
  }
  return rc;
}

int tpl_set_execute(const tpl_set_t *set, const char *name, tpl_value_t data, tpl_arena_t *arena,
                    const tpl_exec_opts_t *opts, buf_t *out, buf_t *err) {
  static const tpl_exec_opts_t defaults = {0};
  if (!opts) opts = &defaults;
  buf_t local = BUF_INIT;
  tpl__exec_t x = {
      .set = set,
      .a = arena,
      .mk = opts->missingkey,
      .err = err ? err : &local,
      .max_steps = opts->max_steps ? opts->max_steps : 100000000ULL,
      .max_output = opts->max_output ? opts->max_output : (64u << 20),
      .max_depth = opts->max_depth ? opts->max_depth : 100000,
      .budget = opts->budget,
      .udata = opts->udata,
      .resolve = opts->resolve,
      .helper = opts->helper,
      .root_name = "gotpl",
  };
  tpl__stack_init(&x.stack, opts->max_stack);
  const tpl_tree_t *t = x_lookup(&x, name, strlen(name));
  int rc;
  if (!t) {
    buf_reset(x.err);
    buf_puts(x.err, "template: no template ");
    tpl_fmt_quote(x.err, name, strlen(name));
    buf_puts(x.err, " associated with template ");
    tpl_fmt_quote(x.err, x.root_name, strlen(x.root_name));
    rc = TPL_EINVAL;
  } else {
    /* The output may grow to max_output, and with a budget as far as its output (or, for a text
     * being built, its memory) allows. */
    size_t start = out->len, max = x.max_output;
    tpl_budget_t *b = x.budget;
    if (opts->nested) {
      size_t room = tpl_arena_room(arena);
      if (room != SIZE_MAX) max = start + room < start ? SIZE_MAX : start + room;
    } else if (b && b->max_output) {
      size_t left = b->max_output > b->output ? b->max_output - b->output : 0;
      if (start + left < max) max = start + left;
    }
    x.next_check = b ? 0 : x.max_steps; /* with a budget, the first step looks at it */
    tpl__state_t s = {.x = &x, .tmpl = t, .out = out};
    rc = run_template(&s, t, data, out, max, opts->nested, 0);
    if (b && !opts->nested && out->len > start) b->output += out->len - start;
    if (rc == TPL__BREAK || rc == TPL__CONTINUE) rc = 0;
  }
  free(x.vars);
  tpl__stack_fini(&x.stack);
  buf_free(&local);
  return rc;
}

/* ---- builtins ---- */

const char *const tpl__builtin_names[TPL_B_COUNT] = {
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery",
    "eq", "ge", "gt", "le", "lt", "ne"};
const char *const tpl__builtin_sigs[TPL_B_COUNT] = {
    "vv*", "vv*", "a*", "vv*", "vv*", "a*", "v", "v", "vv*", "a*", "sa*", "a*", "a*",
    "vv*", "vv", "vv", "vv", "vv", "vv"};

int tpl__builtin_find(const char *name, size_t len) {
  for (int i = 0; i < TPL_B_COUNT; i++)
    if (strlen(tpl__builtin_names[i]) == len && memcmp(tpl__builtin_names[i], name, len) == 0) return i;
  return -1;
}

typedef enum { K_INVALID, K_BOOL, K_INT, K_FLOAT, K_STRING, K_UINT, K_COMPLEX } bkind_t;

static bkind_t basic_kind(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_BOOL: return K_BOOL;
  case TPL_INT:
  case TPL_INT64: return K_INT;
  case TPL_UINT64: return K_UINT;
  case TPL_FLOAT64: return K_FLOAT;
  case TPL_STRING: return K_STRING;
  case TPL_COMPLEX128: return K_COMPLEX;
  default: return K_INVALID;
  }
}

static int str_cmp(const tpl_value_t *a, const tpl_value_t *b) {
  size_t n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;
  int c = memcmp(a->u.s.p, b->u.s.p, n);
  if (c) return c;
  return a->u.s.n < b->u.s.n ? -1 : a->u.s.n > b->u.s.n;
}

static bool is_nilish(const tpl_value_t *v) {
  return v->kind == TPL_INVALID || v->kind == TPL_NIL || (v->kind == TPL_LIST && !v->u.list) ||
         (v->kind == TPL_MAP && !v->u.map);
}

static int b_eq(tpl__state_t *s, tpl_value_t a1, const tpl_value_t *rest, size_t n, bool *res, buf_t *msg) {
  if (a1.kind == TPL_NIL) a1 = tpl_value_invalid();
  if (n == 0) return buf_puts(msg, "missing argument for comparison"), TPL_EEXEC;
  bkind_t k1 = basic_kind(&a1);
  for (size_t i = 0; i < n; i++) {
    tpl_value_t a = rest[i];
    if (a.kind == TPL_NIL) a = tpl_value_invalid();
    bkind_t k2 = basic_kind(&a);
    bool truth = false;
    if (k1 != k2) {
      if (k1 == K_INT && k2 == K_UINT) truth = a1.u.i >= 0 && (uint64_t)a1.u.i == a.u.u;
      else if (k1 == K_UINT && k2 == K_INT) truth = a.u.i >= 0 && a1.u.u == (uint64_t)a.u.i;
      else if (a1.kind != TPL_INVALID && a.kind != TPL_INVALID) {
        buf_printf(msg, "incompatible types for comparison: %s and %s", type_str(s, &a1), type_str(s, &a));
        return TPL_EEXEC;
      }
    } else {
      switch (k1) {
      case K_BOOL: truth = a1.u.b == a.u.b; break;
      case K_FLOAT: truth = a1.u.f == a.u.f; break;
      case K_COMPLEX: truth = a1.u.c.re == a.u.c.re && a1.u.c.im == a.u.c.im; break;
      case K_INT: truth = a1.u.i == a.u.i; break;
      case K_UINT: truth = a1.u.u == a.u.u; break;
      case K_STRING: truth = str_cmp(&a1, &a) == 0; break;
      case K_INVALID: {
        bool can = a1.kind == a.kind || a1.kind == TPL_INVALID || a.kind == TPL_INVALID;
        if (!can) {
          buf_printf(msg, "non-comparable types %s: %s, %s: %s", value_str(s, &a1, "%s"), type_str(s, &a1),
                     type_str(s, &a), value_str(s, &a, "%v"));
          return TPL_EEXEC;
        }
        if (is_nilish(&a1) || is_nilish(&a)) {
          truth = is_nilish(&a) == is_nilish(&a1);
        } else if (a.kind == TPL_LIST || a.kind == TPL_MAP || a.kind == TPL_FUNC) {
          buf_printf(msg, "non-comparable type %s: %s", value_str(s, &a, "%s"), type_str(s, &a));
          return TPL_EEXEC;
        } else {
          truth = a.kind == TPL_OBJECT && a1.u.obj->self == a.u.obj->self && a1.u.obj->type == a.u.obj->type;
        }
        break;
      }
      }
    }
    if (truth) {
      *res = true;
      return 0;
    }
  }
  *res = false;
  return 0;
}

static int b_lt(tpl__state_t *s, tpl_value_t a1, tpl_value_t a2, bool *res, buf_t *msg) {
  if (a1.kind == TPL_NIL) a1 = tpl_value_invalid();
  if (a2.kind == TPL_NIL) a2 = tpl_value_invalid();
  bkind_t k1 = basic_kind(&a1), k2 = basic_kind(&a2);
  if (k1 == K_INVALID || k2 == K_INVALID) return buf_puts(msg, "invalid type for comparison"), TPL_EEXEC;
  bool truth = false;
  if (k1 != k2) {
    if (k1 == K_INT && k2 == K_UINT) truth = a1.u.i < 0 || (uint64_t)a1.u.i < a2.u.u;
    else if (k1 == K_UINT && k2 == K_INT) truth = a2.u.i >= 0 && a1.u.u < (uint64_t)a2.u.i;
    else {
      buf_printf(msg, "incompatible types for comparison: %s and %s", type_str(s, &a1), type_str(s, &a2));
      return TPL_EEXEC;
    }
  } else {
    switch (k1) {
    case K_BOOL:
    case K_COMPLEX: return buf_puts(msg, "invalid type for comparison"), TPL_EEXEC;
    case K_FLOAT: truth = a1.u.f < a2.u.f; break;
    case K_INT: truth = a1.u.i < a2.u.i; break;
    case K_UINT: truth = a1.u.u < a2.u.u; break;
    case K_STRING: truth = str_cmp(&a1, &a2) < 0; break;
    default: break;
    }
  }
  *res = truth;
  return 0;
}

/* fmt.Sprint of the arguments the way html/js/urlquery take them. */
static int eval_args_str(tpl__state_t *s, tpl_value_t *args, size_t n, buf_t *out) {
  if (n == 1 && args[0].kind == TPL_STRING) return buf_append(out, args[0].u.s.p, args[0].u.s.n) ? s_nomem(s) : 0;
  for (size_t i = 0; i < n; i++)
    if (args[i].kind == TPL_INVALID || args[i].kind == TPL_NIL) args[i] = tpl_value_strn("<no value>", 10);
  int rc = tpl__fmt_sprint_max(out, args, n, x_fmt_max(s->x));
  return rc ? fmt_fail(s, out, rc) : 0;
}

static int ret_string(tpl__state_t *s, buf_t *b, tpl_value_t *out) {
  *out = tpl_value_str_copy(s->x->a, b->data ? b->data : "", b->len);
  buf_free(b);
  if (out->kind == TPL_INVALID) return s_nomem(s);
  return 0;
}

static int index_arg(const tpl_value_t *ix, size_t cap, int64_t *out, buf_t *msg, tpl__state_t *s) {
  int64_t x;
  tpl_value_t v = *ix;
  if (v.kind == TPL_NIL) v = tpl_value_invalid();
  switch (v.kind) {
  case TPL_INT:
  case TPL_INT64: x = v.u.i; break;
  case TPL_UINT64: x = (int64_t)v.u.u; break;
  case TPL_INVALID: buf_puts(msg, "cannot index slice/array with nil"); return TPL_EEXEC;
  default: buf_printf(msg, "cannot index slice/array with type %s", type_str(s, &v)); return TPL_EEXEC;
  }
  if (x < 0 || (uint64_t)x > cap) {
    buf_printf(msg, "index out of range: %lld", (long long)x);
    return TPL_EEXEC;
  }
  *out = x;
  return 0;
}

static int call_builtin(tpl__state_t *s, int id, tpl_value_t *args, size_t n, const tpl_node_t *cmd,
                        const tpl_node_t *const *argnodes, size_t nargnodes, const tpl_value_t *final,
                        tpl_value_t *out, buf_t *msg) {
  buf_t b = BUF_INIT;
  int rc;
  bool r;
  switch (id) {
  case TPL_B_NOT: *out = tpl_value_bool(!value_truth(&args[0])); return 0;
  case TPL_B_LEN: {
    tpl_value_t v = args[0];
    if (v.kind == TPL_NIL) return buf_puts(msg, "len of nil pointer"), TPL_EEXEC;
    if (v.kind == TPL_INVALID) return buf_puts(msg, "reflect: call of reflect.Value.Type on zero Value"), TPL_EEXEC;
    int64_t l = tpl_value_len(&v);
    if (l < 0) return buf_printf(msg, "len of type %s", type_str(s, &v)), TPL_EEXEC;
    *out = tpl_value_int(l);
    return 0;
  }
  case TPL_B_PRINT:
    if ((rc = tpl__fmt_sprint_max(&b, args, n, x_fmt_max(s->x)))) return fmt_fail(s, &b, rc);
    return ret_string(s, &b, out);
  case TPL_B_PRINTLN:
    if ((rc = tpl__fmt_sprintln_max(&b, args, n, x_fmt_max(s->x)))) return fmt_fail(s, &b, rc);
    return ret_string(s, &b, out);
  case TPL_B_PRINTF:
    if ((rc = tpl__fmt_sprintf_max(&b, args[0].u.s.p, args[0].u.s.n, args + 1, n - 1, x_fmt_max(s->x))))
      return fmt_fail(s, &b, rc);
    return ret_string(s, &b, out);
  case TPL_B_HTML: {
    buf_t in = BUF_INIT;
    if ((rc = eval_args_str(s, args, n, &in))) return rc;
    for (size_t i = 0; i < in.len; i++) {
      char c = in.data[i];
      switch (c) {
      case '"': buf_puts(&b, "&#34;"); break;
      case '\'': buf_puts(&b, "&#39;"); break;
      case '&': buf_puts(&b, "&amp;"); break;
      case '<': buf_puts(&b, "&lt;"); break;
      case '>': buf_puts(&b, "&gt;"); break;
      case 0: buf_puts(&b, "\xEF\xBF\xBD"); break;
      default: buf_putc(&b, c);
      }
    }
    buf_free(&in);
    if (!b.data) buf_puts(&b, "");
    return ret_string(s, &b, out);
  }
  case TPL_B_JS: {
    buf_t in = BUF_INIT;
    if ((rc = eval_args_str(s, args, n, &in))) return rc;
    for (size_t i = 0; i < in.len; i++) {
      unsigned char c = (unsigned char)in.data[i];
      if (c >= 0x80) {
        int32_t rr;
        size_t w = tpl__utf8_decode(in.data + i, in.len - i, &rr);
        if (tpl__is_print(rr)) buf_append(&b, in.data + i, w);
        else buf_printf(&b, "\\u%04X", (unsigned)rr);
        i += w - 1;
        continue;
      }
      switch (c) {
      case '\\': buf_puts(&b, "\\\\"); break;
      case '\'': buf_puts(&b, "\\'"); break;
      case '"': buf_puts(&b, "\\\""); break;
      case '<': buf_puts(&b, "\\u003C"); break;
      case '>': buf_puts(&b, "\\u003E"); break;
      case '&': buf_puts(&b, "\\u0026"); break;
      case '=': buf_puts(&b, "\\u003D"); break;
      default:
        if (c < ' ') buf_printf(&b, "\\u00%02X", c);
        else buf_putc(&b, (char)c);
      }
    }
    buf_free(&in);
    if (!b.data) buf_puts(&b, "");
    return ret_string(s, &b, out);
  }
  case TPL_B_URLQUERY: {
    buf_t in = BUF_INIT;
    if ((rc = eval_args_str(s, args, n, &in))) return rc;
    for (size_t i = 0; i < in.len; i++) {
      unsigned char c = (unsigned char)in.data[i];
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
          c == '.' || c == '~')
        buf_putc(&b, (char)c);
      else if (c == ' ') buf_putc(&b, '+');
      else buf_printf(&b, "%%%02X", c);
    }
    buf_free(&in);
    if (!b.data) buf_puts(&b, "");
    return ret_string(s, &b, out);
  }
  case TPL_B_EQ:
    if ((rc = b_eq(s, args[0], args + 1, n - 1, &r, msg))) return rc;
    *out = tpl_value_bool(r);
    return 0;
  case TPL_B_NE:
    if ((rc = b_eq(s, args[0], args + 1, 1, &r, msg))) return rc;
    *out = tpl_value_bool(!r);
    return 0;
  case TPL_B_LT:
  case TPL_B_GE:
    if ((rc = b_lt(s, args[0], args[1], &r, msg))) return rc;
    *out = tpl_value_bool(id == TPL_B_LT ? r : !r);
    return 0;
  case TPL_B_LE:
  case TPL_B_GT:
    if ((rc = b_lt(s, args[0], args[1], &r, msg))) return rc;
    if (!r && (rc = b_eq(s, args[0], args + 1, 1, &r, msg))) return rc;
    *out = tpl_value_bool(id == TPL_B_LE ? r : !r);
    return 0;
  case TPL_B_INDEX: {
    tpl_value_t item = args[0];
    if (item.kind == TPL_NIL) item = tpl_value_invalid();
    if (item.kind == TPL_INVALID) return buf_puts(msg, "index of untyped nil"), TPL_EEXEC;
    for (size_t i = 1; i < n; i++) {
      tpl_value_t ix = args[i];
      if (ix.kind == TPL_NIL) ix = tpl_value_invalid();
      if (item.kind == TPL_NIL) return buf_puts(msg, "index of nil pointer"), TPL_EEXEC;
      if (item.kind == TPL_LIST || item.kind == TPL_STRING) {
        size_t len = (size_t)tpl_value_len(&item);
        int64_t x;
        if ((rc = index_arg(&ix, len, &x, msg, s))) return rc;
        if ((size_t)x == len) {
          buf_puts(msg, item.kind == TPL_LIST ? "reflect: slice index out of range" : "reflect: string index out of range");
          return TPL_EEXEC;
        }
        if (item.kind == TPL_LIST) item = tpl_list_at(item.u.list, (size_t)x);
        else {
          tpl_value_t bv = tpl_value_uint64((unsigned char)item.u.s.p[x]);
          bv.elem = 1; /* uint8 */
          item = bv;
        }
      } else if (item.kind == TPL_MAP) {
        if (ix.kind == TPL_INVALID) return buf_puts(msg, "value is nil; should be of type string"), TPL_EEXEC;
        if (ix.kind != TPL_STRING)
          return buf_printf(msg, "value has type %s; should be string", type_str(s, &ix)), TPL_EEXEC;
        tpl_value_t *v = tpl_map_get(item.u.map, ix.u.s.p, ix.u.s.n);
        item = v ? *v : zero_of_elem(item.elem);
      } else {
        return buf_printf(msg, "can't index item of type %s", type_str(s, &item)), TPL_EEXEC;
      }
    }
    *out = item;
    return 0;
  }
  case TPL_B_SLICE: {
    tpl_value_t item = args[0];
    if (item.kind == TPL_NIL) item = tpl_value_invalid();
    if (item.kind == TPL_INVALID) return buf_puts(msg, "slice of untyped nil"), TPL_EEXEC;
    size_t ni = n - 1;
    if (ni > 3) return buf_printf(msg, "too many slice indexes: %zu", ni), TPL_EEXEC;
    size_t cap, len;
    if (item.kind == TPL_STRING) {
      if (ni == 3) return buf_puts(msg, "cannot 3-index slice a string"), TPL_EEXEC;
      cap = len = item.u.s.n;
    } else if (item.kind == TPL_LIST) {
      cap = item.u.list ? item.u.list->cap : 0;
      len = item.u.list ? item.u.list->len : 0;
    } else {
      return buf_printf(msg, "can't slice item of type %s", type_str(s, &item)), TPL_EEXEC;
    }
    int64_t idx[3] = {0, (int64_t)len, 0};
    for (size_t i = 0; i < ni; i++)
      if ((rc = index_arg(&args[1 + i], cap, &idx[i], msg, s))) return rc;
    if (idx[0] > idx[1])
      return buf_printf(msg, "invalid slice index: %lld > %lld", (long long)idx[0], (long long)idx[1]), TPL_EEXEC;
    if (ni == 3 && idx[1] > idx[2])
      return buf_printf(msg, "invalid slice index: %lld > %lld", (long long)idx[1], (long long)idx[2]), TPL_EEXEC;
    if (item.kind == TPL_STRING) {
      *out = tpl_value_strn(item.u.s.p + idx[0], (size_t)(idx[1] - idx[0]));
      return 0;
    }
    *out = item;
    if (!item.u.list) return 0; /* a nil slice sliced [0:0] is still nil */
    /* Like Go, the result shares the items and keeps the capacity left (and the generation: a
     * write through the slice lands in the original's array). */
    tpl_list_t *nl = tpl_list_slice(s->x->a, item.u.list, (size_t)idx[0], (size_t)(idx[1] - idx[0]),
                                    (size_t)((ni == 3 ? idx[2] : (int64_t)cap) - idx[0]));
    if (!nl) return s_nomem(s);
    nl->type = NULL;
    out->u.list = nl;
    return 0;
  }
  case TPL_B_CALL: {
    const char *callee;
    if (nargnodes == 0) callee = final && final->kind == TPL_FUNC ? "<func Value>" : "<invalid Value>";
    else callee = node_str(s, argnodes[0]);
    tpl_value_t fv = args[0];
    if (fv.kind == TPL_NIL) fv = tpl_value_invalid();
    if (fv.kind == TPL_INVALID) return buf_puts(msg, "call of nil"), TPL_EEXEC;
    if (fv.kind != TPL_FUNC) return buf_printf(msg, "non-function %s of type %s", callee, type_str(s, &fv)), TPL_EEXEC;
    const tpl_func_t *f = fv.u.fn;
    tpl__sig_t g = parse_sig(f->sig);
    size_t na = n - 1;
    if (g.variadic) {
      if (na < g.n - 1)
        return buf_printf(msg, "wrong number of args for %s: got %zu want at least %zu", callee, na, g.n - 1), TPL_EEXEC;
    } else if (na != g.n) {
      return buf_printf(msg, "wrong number of args for %s: got %zu want %zu", callee, na, g.n), TPL_EEXEC;
    }
    for (size_t i = 0; i < na; i++) {
      tpl_value_t a = args[1 + i];
      if (a.kind == TPL_NIL) a = tpl_value_invalid();
      char t = (!g.variadic || i < g.n - 1) ? g.p[i] : g.p[g.n - 1];
      if (a.kind == TPL_INVALID) {
        if (!param_can_be_nil(t))
          return buf_printf(msg, "arg %zu: value is nil; should be of type %s", i, param_type_name(t)), TPL_EEXEC;
        a = zero_of_param(t);
      } else if (!assignable(&a, t)) {
        bool intlike = (a.kind == TPL_INT || a.kind == TPL_INT64 || a.kind == TPL_UINT64) && (t == 'i' || t == 'I');
        if (!intlike)
          return buf_printf(msg, "arg %zu: value has type %s; should be %s", i, type_str(s, &a), param_type_name(t)),
                 TPL_EEXEC;
        a = t == 'i' ? tpl_value_int(a.u.i) : tpl_value_int64(a.u.i);
      }
      args[1 + i] = a;
    }
    tpl_call_t c2 = {.s = s, .fn = f, .self = NULL, .msg = BUF_INIT};
    rc = f->fn(&c2, args + 1, na, out);
    if (rc) {
      buf_append(msg, c2.msg.data ? c2.msg.data : "", c2.msg.len);
      buf_free(&c2.msg);
      return rc;
    }
    buf_free(&c2.msg);
    return 0;
  }
  }
  (void)cmd;
  return buf_puts(msg, "unknown builtin"), TPL_EEXEC;
}

/* ---- function tables ---- */

struct tpl_funcs_s {
  tpl_map_t map;
  tpl_arena_t *a;
};

tpl_funcs_t *tpl_funcs_new(void) {
  tpl_funcs_t *t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->a = tpl_arena_new(0);
  if (!t->a) {
    free(t);
    return NULL;
  }
  return t;
}

int tpl_funcs_add(tpl_funcs_t *t, const tpl_func_t *fns, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!fns[i].name || !fns[i].fn || !fns[i].sig) return TPL_EINVAL;
    tpl_value_t v = {0};
    v.kind = TPL_FUNC;
    v.u.fn = &fns[i];
    if (tpl_map_set(t->a, &t->map, fns[i].name, strlen(fns[i].name), v)) return TPL_ENOMEM;
  }
  return 0;
}

const tpl_func_t *tpl_funcs_find(const tpl_funcs_t *t, const char *name, size_t len) {
  tpl_value_t *v = tpl_map_get(&t->map, name, len);
  return v ? v->u.fn : NULL;
}

void tpl_funcs_free(tpl_funcs_t *t) {
  if (!t) return;
  tpl_arena_free(t->a);
  free(t);
}
