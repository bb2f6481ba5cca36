/* The Go text/template language in C: values, function tables, parsed
 * template sets and their execution, byte-identical to Go's text/template as
 * Helm uses it. No I/O, no global mutable state: a parsed set and a function
 * table are immutable once built and may be shared by threads; each
 * execution works in a caller-owned arena. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"

struct worker_s; /* base/worker.h */

/* ---- errors ---------------------------------------------------------- */

#define TPL_ENOMEM (-12)   /* out of memory */
#define TPL_EPARSE (-2001) /* template text does not parse; message says where */
#define TPL_EEXEC (-2002)  /* execution failed; message in Go's wording */
#define TPL_ELIMIT (-2003) /* a resource limit was hit (output, steps, depth, memory) */
#define TPL_EINVAL (-2004) /* the API was misused (unknown template, bad argument) */

/* ---- arena ----------------------------------------------------------- */

typedef struct tpl_arena_s tpl_arena_t;

/* Creates an arena that refuses to grow past max_bytes (0: no limit); NULL when out of memory. */
tpl_arena_t *tpl_arena_new(size_t max_bytes);
/* Frees the arena and everything allocated from it. */
void tpl_arena_free(tpl_arena_t *a);
/* Allocates n zeroed bytes, 16-aligned; NULL when out of memory or over the limit. */
void *tpl_arena_alloc(tpl_arena_t *a, size_t n);
/* Copies n bytes into the arena and NUL-terminates them; NULL on failure. */
char *tpl_arena_strndup(tpl_arena_t *a, const char *s, size_t n);
/* Room for a text of n bytes (packed, not cleared; the byte at n is NUL); NULL on OOM. */
char *tpl_arena_text(tpl_arena_t *a, size_t n);
/* Hands a malloc'd block of n bytes to the arena, which frees it with itself (or when a release
 * gives back what was allocated after it); 0, or TPL_ENOMEM (then the caller keeps p). */
int tpl_arena_adopt(tpl_arena_t *a, void *p, size_t n);
/* Bytes handed out so far. */
size_t tpl_arena_used(const tpl_arena_t *a);
/* True when an allocation failed because of the arena's limit (not the system). Once it is, every
 * later allocation fails too (a render that ran out of its budget does no more work). */
bool tpl_arena_over_limit(const tpl_arena_t *a);
/* Bytes the arena may still hand out before its limit (SIZE_MAX without one). */
size_t tpl_arena_room(const tpl_arena_t *a);
/* Marks the arena as over its limit (a text built outside it would not have fitted). */
void tpl_arena_set_over(tpl_arena_t *a);

/* A point in an arena's life (tpl_arena_mark). */
typedef struct tpl_arena_mark_s {
  void *chunk;     /* the chunk allocations came from at the mark (NULL: none yet) */
  size_t used;     /* its bytes in use then */
  size_t total;    /* the arena's tpl_arena_used then */
  uint64_t seq;    /* chunks numbered above this were made after the mark */
} tpl_arena_mark_t;

/* Marks the arena so that what is allocated from now on can be given back with
 * tpl_arena_release. Lists and maps made after the mark belong to a new generation; writing into
 * one made before it (tpl_map_set, tpl_list_push, also through a slice of it) is noted, because
 * the container would then refer to memory the release frees. Marks do not nest. */
tpl_arena_mark_t tpl_arena_mark(tpl_arena_t *a);
/* Gives back everything allocated since the mark unless a list or map made before the mark was
 * written since (then nothing is freed and false is returned); true when released. Nothing made
 * after the mark may be used afterwards. Ends the mark either way. */
bool tpl_arena_release(tpl_arena_t *a, const tpl_arena_mark_t *m);

/* How many times a value was stored into a list or map of the arena so far (any generation): no
 * change over a call means nothing it made, or borrowed, was kept in a container. */
uint64_t tpl_arena_writes(const tpl_arena_t *a);

/* ---- values ---------------------------------------------------------- */

/* Go kinds. TPL_INVALID is Go's invalid reflect.Value ("<no value>");
 * TPL_NIL is a nil interface{} held by a container or passed as an argument. */
typedef enum {
  TPL_INVALID = 0,
  TPL_NIL,
  TPL_BOOL,
  TPL_INT,     /* Go int (64-bit) */
  TPL_INT64,   /* Go int64 */
  TPL_UINT64,  /* Go uint64 */
  TPL_FLOAT64, /* Go float64 */
  TPL_STRING,
  TPL_LIST,    /* a slice; elem says its element type */
  TPL_MAP,     /* a map with string keys; elem says its value type */
  TPL_OBJECT,  /* a host object with a type name, fields and methods */
  TPL_FUNC,    /* a host function value (for `call`) */
  TPL_COMPLEX128, /* Go complex128 (only from complex constants such as 3i or 1+2i) */
} tpl_kind_t;

/* Element types of lists and maps (Go's []interface{} vs []string, ...). */
typedef enum {
  TPL_ELEM_ANY = 0, /* interface {} */
  TPL_ELEM_STRING,  /* string */
  TPL_ELEM_INT,     /* int */
  TPL_ELEM_INT64,   /* int64 */
  TPL_ELEM_FLOAT64, /* float64 */
  TPL_ELEM_BOOL,    /* bool */
  TPL_ELEM_UINT8,   /* uint8 (a []byte is a TPL_LIST of uint8: see tpl_value_bytes) */
  TPL_ELEM_BYTES,   /* []uint8 (e.g. the values of Helm's Files, map[string][]byte) */
} tpl_elem_t;

typedef struct tpl_value_s tpl_value_t;

/* Values of tpl_value_t.view. */
typedef enum {
  TPL_VIEW_OWN = 0,    /* the named type recorded on the map or list (tpl_map_t.type / tpl_list_t.type), if any */
  TPL_VIEW_PLAIN = 1,  /* the unnamed underlying type (map[string]..., []...) */
  TPL_VIEW_VALUES = 2, /* Helm's common.Values (a map[string]interface {}; see tpl_helm_values_type) */
} tpl_view_t;
typedef struct tpl_list_s tpl_list_t;
typedef struct tpl_map_s tpl_map_t;
typedef struct tpl_object_s tpl_object_t;
typedef struct tpl_func_s tpl_func_t;
struct tpl_type_s;

struct tpl_value_s {
  uint8_t kind; /* tpl_kind_t */
  uint8_t elem; /* tpl_elem_t, for TPL_LIST and TPL_MAP; for TPL_UINT64 1 means Go uint8 */
  uint8_t iface; /* held in an interface{} (a map[string]interface{} value, a []interface{} element) */
  /* For TPL_MAP and TPL_LIST, the Go type this value has (tpl_view_t). In Go a named type belongs to
   * the value, not to the map it refers to: one map is common.Values as a subchart's .Values and
   * map[string]interface {} as the parent's .Values.sub, and a common.Values passed to a
   * map[string]interface {} parameter comes back unnamed. */
  uint8_t view;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double f;
    struct {
      double re, im;
    } c; /* TPL_COMPLEX128 */
    struct {
      const char *p;
      size_t n;
    } s;
    tpl_list_t *list; /* NULL: a nil slice */
    tpl_map_t *map;   /* NULL: a nil map */
    tpl_object_t *obj;
    const tpl_func_t *fn;
  } u;
};

/* cap is Go's capacity: items[len..cap) exist and hold the element type's
 * zero value (nil for []interface {}), so `slice` may reach them as in Go.
 * tpl_list_push grows cap exactly as Go's append does. */
struct tpl_list_s {
  size_t len, cap;
  tpl_value_t *items; /* NULL while bytes is set: read items with tpl_list_at */
  /* A compact Go []byte (tpl_value_bytes): its items are the uint8 values of bytes[0..cap), made
   * only when read (tpl_list_at), so a file of the chart costs its bytes, not a tpl_value_t per
   * byte. Never written in place: tpl_list_push first makes the items (tpl_list_expand). */
  const unsigned char *bytes;
  uint8_t elem; /* tpl_elem_t of the items: decides the zero value and append's growth */
  uint32_t gen; /* arena generation of the list and its items (a slice has its array's): see tpl_arena_mark */
  /* A named slice type (Go `type VersionSet []string`): its name for %T and errors and its
   * methods (which receive this tpl_list_t as tpl_call_self); NULL: an unnamed []T. */
  const struct tpl_type_s *type;
};

typedef struct tpl_map_entry_s {
  const char *key;
  size_t klen;
  tpl_value_t val;
} tpl_map_entry_t;

struct tpl_map_s {
  size_t len, cap;
  tpl_map_entry_t *ents; /* insertion order; printing and range sort keys */
  uint32_t *index;       /* open-addressing hash of ents positions + 1 */
  uint32_t icap;
  uint32_t gen;          /* arena generation the map was made in: see tpl_arena_mark */
  /* A named map type with methods (Go `type files map[string][]byte`): name
   * and methods, which receive this tpl_map_t as tpl_call_self. `.Name` calls a method when the
   * type has one (methods win over keys, as in Go), else looks the key up; range, index, len and
   * printing see the underlying map. NULL: no methods. Applies to values whose view is TPL_VIEW_OWN. */
  const struct tpl_type_s *type;
};

/* Constructors for scalar values (no allocation; strings are borrowed). */
static inline tpl_value_t tpl_value_invalid(void) { return (tpl_value_t){0}; }
/* A nil interface{}. */
static inline tpl_value_t tpl_value_nil(void) { return (tpl_value_t){.kind = TPL_NIL}; }
/* A bool. */
static inline tpl_value_t tpl_value_bool(bool b) { return (tpl_value_t){.kind = TPL_BOOL, .u.b = b}; }
/* A Go int. */
static inline tpl_value_t tpl_value_int(int64_t i) { return (tpl_value_t){.kind = TPL_INT, .u.i = i}; }
/* A Go int64. */
static inline tpl_value_t tpl_value_int64(int64_t i) { return (tpl_value_t){.kind = TPL_INT64, .u.i = i}; }
/* A Go uint64. */
static inline tpl_value_t tpl_value_uint64(uint64_t u) { return (tpl_value_t){.kind = TPL_UINT64, .u.u = u}; }
/* A Go float64. */
static inline tpl_value_t tpl_value_float(double f) { return (tpl_value_t){.kind = TPL_FLOAT64, .u.f = f}; }
/* A Go complex128. */
static inline tpl_value_t tpl_value_complex(double re, double im) {
  return (tpl_value_t){.kind = TPL_COMPLEX128, .u.c = {re, im}};
}
/* A string referring to p[0..n) (not copied). */
static inline tpl_value_t tpl_value_strn(const char *p, size_t n) {
  return (tpl_value_t){.kind = TPL_STRING, .u.s = {p ? p : "", n}};
}
/* A string referring to a C string (not copied). */
static inline tpl_value_t tpl_value_str(const char *s) { return tpl_value_strn(s, strlen(s)); }
/* A string copied into the arena; kind TPL_INVALID when out of memory. */
tpl_value_t tpl_value_str_copy(tpl_arena_t *a, const char *p, size_t n);
/* A new empty list (elem type given); kind TPL_INVALID when out of memory. */
tpl_value_t tpl_value_list_new(tpl_arena_t *a, tpl_elem_t elem, size_t cap);
/* A new empty map (elem type given); kind TPL_INVALID when out of memory. */
tpl_value_t tpl_value_map_new(tpl_arena_t *a, tpl_elem_t elem);
/* A Go []byte holding a copy of p[0..n): a TPL_LIST of uint8 (elem TPL_ELEM_UINT8), which ranges,
 * indexes and prints like Go's ([104 105]; %s/%q/%x print the bytes as text). Kind TPL_INVALID
 * when out of memory. */
tpl_value_t tpl_value_bytes(tpl_arena_t *a, const char *p, size_t n);
/* tpl_value_bytes without the copy: p[0..n) must outlive the arena's use of the value. */
tpl_value_t tpl_value_bytes_ref(tpl_arena_t *a, const char *p, size_t n);
/* Item i (< cap) of a list, compact or not. */
static inline tpl_value_t tpl_list_at(const tpl_list_t *l, size_t i) {
  if (l->bytes) return (tpl_value_t){.kind = TPL_UINT64, .elem = 1, .u.u = l->bytes[i]};
  return l->items[i];
}
/* Makes the items of a compact []byte (a no-op for other lists); 0 or TPL_ENOMEM. */
int tpl_list_expand(tpl_arena_t *a, tpl_list_t *l);
/* A list sharing l's items (or bytes) from start: Go's l[start:start+len:start+cap]; NULL on OOM. */
tpl_list_t *tpl_list_slice(tpl_arena_t *a, const tpl_list_t *l, size_t start, size_t len, size_t cap);
/* The bytes of a []byte value (a list of uint8) as text: borrowed for a compact one, else copied
 * into the arena; *n set. "" for a nil slice; NULL when out of memory. */
const char *tpl_value_bytes_text(tpl_arena_t *a, const tpl_value_t *v, size_t *n);
/* Appends to a list value (which must be non-nil), growing its capacity as
 * Go's append does (a list built by pushes from tpl_value_list_new(.., 0) has
 * the capacity encoding/json gives a decoded array); 0 or TPL_ENOMEM. */
int tpl_list_push(tpl_arena_t *a, tpl_list_t *l, tpl_value_t v);
/* Sets key (copied into the arena) in a map; 0 or TPL_ENOMEM. */
int tpl_map_set(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v);
/* tpl_map_set with a key that is not copied: it must live as long as the map (e.g. in its arena). */
int tpl_map_set_key(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v);
/* Makes room for n entries in all (exactly n when it grows); 0 or TPL_ENOMEM. */
int tpl_map_reserve(tpl_arena_t *a, tpl_map_t *m, size_t n);
/* Looks key up; NULL when absent. */
tpl_value_t *tpl_map_get(const tpl_map_t *m, const char *key, size_t klen);
/* Removes key; true when it was there. */
bool tpl_map_delete(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen);
/* Returns the map's entries sorted by key (arena array of pointers); NULL on OOM (or empty map). */
const tpl_map_entry_t **tpl_map_sorted(tpl_arena_t *a, const tpl_map_t *m);
/* Appends the Go type name of v (as %T prints it: "int", "[]interface {}", "<nil>"). */
int tpl_value_type_name(const tpl_value_t *v, buf_t *out);
/* A Go []byte (an unnamed list of uint8, nil or not): what encoding/json writes as base64 and
 * Sprig's strval converts to a string. */
bool tpl_value_is_bytes(const tpl_value_t *v);
/* The named type (with methods) of a map or list value, as its view says; NULL: unnamed or another kind. */
const struct tpl_type_s *tpl_value_named(const tpl_value_t *v);
/* Go's truthiness for if/with/and/or/not: false, 0, nil, empty string/list/map. */
bool tpl_value_truth(const tpl_value_t *v);
/* Length for len/empty: -1 when v has no length. */
int64_t tpl_value_len(const tpl_value_t *v);

/* ---- memo ------------------------------------------------------------- */
/* Results that depend only on a list or map's contents (toJson of .Values, repeated in every
 * template of a chart) can be remembered for the arena's life, for containers made before the
 * arena's first mark. A result is reused only while the values are exactly as when it was computed
 * (known without looking while no list or map of the tree was written since it was last checked;
 * otherwise a snapshot of the whole tree's shape is compared, which costs far less than encoding),
 * and kept
 * only the second time it is computed from the same values, so that one computed once costs
 * nothing. Texts that are themselves remembered results (tpl_arena_memo_owns) can key results too
 * (the sum of a remembered encoding). */
/* The remembered result `what` of v (*len set), or NULL. */
const char *tpl_memo_get(tpl_arena_t *a, const tpl_value_t *v, int what, size_t *len);
/* Offers a result computed from v: its stored copy (lives as long as the arena), or NULL when it is
 * not kept (yet). */
const char *tpl_memo_put(tpl_arena_t *a, const tpl_value_t *v, int what, const char *text, size_t len);
/* Notes a change made to list or map c in place without tpl_map_set, tpl_map_delete or
 * tpl_list_push (such as sorting its items), so that results remembered from it are not reused. */
void tpl_arena_note_write(tpl_arena_t *a, const void *c);
/* True when p[0..n) is a remembered result. */
bool tpl_arena_memo_owns(const tpl_arena_t *a, const char *p, size_t n);
/* tpl_memo_get/put for a result computed from a remembered text (kept at once). */
const char *tpl_memo_text_get(tpl_arena_t *a, const char *key, size_t klen, int what, size_t *len);
const char *tpl_memo_text_put(tpl_arena_t *a, const char *key, size_t klen, int what, const char *text, size_t len);

/* ---- host objects and functions ---------------------------------------- */

typedef struct tpl_call_s tpl_call_t;

/* Parameter types of host functions, one letter each in tpl_func_t.sig:
 * 'a' interface{}, 'v' reflect.Value (raw, even invalid), 's' string,
 * 'i' int, 'I' int64, 'f' float64, 'b' bool, 'l' []interface{},
 * 'm' map[string]interface{}, 'L' []string, 'w' io.Writer (only nil fits), 'u' uint32 (only integer
 * constants fit, truncated; the function gets a TPL_UINT64), 'T' time.Time and 'C' sprig.certificate
 * (host objects of exactly that type name). A final '*' makes the last
 * parameter variadic (Go's ...T). */
typedef int (*tpl_fn_t)(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *result);

struct tpl_func_s {
  const char *name;
  const char *sig; /* parameter letters, see above */
  tpl_fn_t fn;
  void *udata;          /* handed to fn through the call */
  const char *go_type;  /* the Go func type for %T/errors, e.g. "func(string) string"; NULL: generic */
};

/* A host type: name for %T and error messages, optional fields and methods. */
typedef struct tpl_type_s {
  const char *name; /* e.g. "chartutil.Files" */
  /* Looks a field up: 1 found (*out set), 0 not found, <0 error. Reserved names (never Go
   * identifiers): "%v", "%+v", "%#v" give the text fmt prints for a struct without String();
   * "*String" the text a template action prints for an addressable value whose pointer type has
   * String() (e.g. .Capabilities.KubeVersion). */
  int (*field)(void *self, const char *name, tpl_value_t *out);
  /* Looks a method up: NULL when none. The method receives self through tpl_call_self(). */
  const tpl_func_t *(*method)(void *self, const char *name);
  /* Appends what fmt prints for the object (its String() method); NULL: "{...}". */
  int (*format)(void *self, buf_t *out);
} tpl_type_t;

struct tpl_object_s {
  const tpl_type_t *type;
  void *self;
};

/* A function table: an immutable name → function map once built. */
typedef struct tpl_funcs_s tpl_funcs_t;

/* Creates an empty table; NULL when out of memory. */
tpl_funcs_t *tpl_funcs_new(void);
/* Adds (or replaces) functions; the array must outlive the table. 0 or TPL_ENOMEM/TPL_EINVAL. */
int tpl_funcs_add(tpl_funcs_t *t, const tpl_func_t *fns, size_t n);
/* Finds a function by name; NULL when absent. */
const tpl_func_t *tpl_funcs_find(const tpl_funcs_t *t, const char *name, size_t len);
/* Frees the table (not the functions). */
void tpl_funcs_free(tpl_funcs_t *t);

/* Sets the error of a call (Go's error text, without "error calling X: "); returns TPL_EEXEC. */
int tpl_call_errorf(tpl_call_t *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The arena of the running execution (results of functions live there). */
tpl_arena_t *tpl_call_arena(tpl_call_t *call);
/* The function's udata. */
void *tpl_call_udata(tpl_call_t *call);
/* The receiver of a method call (tpl_object_t.self), or NULL. */
void *tpl_call_self(tpl_call_t *call);
/* For host functions that do much work in one call (regular expressions, encoders) or build a
 * text outside the arena: 0 to go on, or TPL_ELIMIT when the budget is spent (time, or a limit hit
 * before), with the call's error set as the execution reports limits; the function then returns
 * TPL_ELIMIT at once. */
int tpl_call_check(tpl_call_t *call);
/* tpl_call_check, and room for a text of n more bytes within the memory limit (TPL_ELIMIT when
 * there is none). */
int tpl_call_reserve(tpl_call_t *call, size_t n);
/* The bytes a text built by the call may have before tpl_call_reserve would fail (SIZE_MAX: no limit). */
size_t tpl_call_room(tpl_call_t *call);
/* Executes the named template of the running set with data, appending to out (for include). */
int tpl_call_execute(tpl_call_t *call, const char *name, tpl_value_t data, buf_t *out);

/* ---- template sets ------------------------------------------------------ */

typedef struct tpl_set_s tpl_set_t;

/* Creates an empty set whose templates may call funcs (builtins are always there). NULL on OOM. */
tpl_set_t *tpl_set_new(const tpl_funcs_t *funcs);
/* Parses text as template `name` plus the templates it defines, like Go's
 * t.New(name).Parse(text). Returns 0, TPL_EPARSE (message in err, Go's wording) or TPL_ENOMEM. */
int tpl_set_parse(tpl_set_t *set, const char *name, const char *text, size_t len, buf_t *err);
/* A set that starts as base (which must outlive it and is not changed): templates parsed into the
 * overlay are its own and hide base's of the same name; lookups fall back to base. For running one
 * template without keeping its tree in base, or Go's Clone-then-Parse. NULL on OOM. */
tpl_set_t *tpl_set_overlay(const tpl_set_t *base);
/* Makes set, made by tpl_set_new, an overlay of base as tpl_set_overlay would have (parsing does
 * not consult the base, so a file can be parsed before its base is known; none of its templates
 * may be named as one of base's). */
void tpl_set_attach(tpl_set_t *set, const tpl_set_t *base);
/* How many templates the set itself holds (an overlay's own, without its base's). */
size_t tpl_set_count(const tpl_set_t *set);
/* True when the set has a template called name. */
bool tpl_set_has(const tpl_set_t *set, const char *name);
/* Frees the set. */
void tpl_set_free(tpl_set_t *set);

typedef enum {
  TPL_MISSINGKEY_DEFAULT = 0, /* Go's default: missing keys are <no value> */
  TPL_MISSINGKEY_ZERO,        /* Helm's default: zero value of the map's element type */
  TPL_MISSINGKEY_ERROR,       /* Helm's strict mode */
} tpl_missingkey_t;

/* A budget shared by the executions of one render (its templates, their includes and tpl calls):
 * the memory limit is the arena's (tpl_arena_new), which also bounds the texts that executions and
 * host functions build outside it (an include's text, an encoder's output); this adds a limit on
 * the bytes of output all the executions write together and a deadline. The first limit exceeded is
 * recorded with where it was, and every later check fails: no more work is done. Used by one
 * thread at a time. */
typedef enum {
  TPL_BUDGET_NONE = 0,
  TPL_BUDGET_MEMORY, /* the arena's limit, or a text built outside it that would not fit in it */
  TPL_BUDGET_OUTPUT, /* max_output */
  TPL_BUDGET_TIME,   /* deadline */
} tpl_budget_kind_t;

typedef struct tpl_budget_s {
  size_t max_output;    /* bytes of output of all the executions together (0: no limit) */
  uint64_t deadline_ns; /* CLOCK_MONOTONIC time (tpl_now_ns) at which execution stops (0: none) */
  size_t output;        /* output written so far (finished executions) */
  int hit;              /* tpl_budget_kind_t of the first limit exceeded */
  char where[256];      /* "NAME:LINE" of the template where it was exceeded ("" outside one) */
} tpl_budget_t;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t tpl_now_ns(void);
/* Checks b's deadline now: 0, or TPL_ELIMIT (b->hit set; also when a limit was hit before). */
int tpl_budget_check(tpl_budget_t *b);

typedef struct tpl_exec_opts_s {
  tpl_missingkey_t missingkey;
  size_t max_output; /* bytes of output (0: 64 MiB) */
  uint64_t max_steps; /* evaluation steps (0: 100 million) */
  int max_depth;      /* nested template calls (0: Go's 100000) */
  void *udata;        /* for host functions: tpl_call_exec_udata() */
  size_t max_stack;   /* bytes of stack for deep nesting beyond the caller's first MiB (0: 512 MiB, reserved
                         in 16 MiB segments and touched only as used) */
  /* Called when a template name is not in the set (template action, include): it may parse it into
   * the executing set (an overlay the host owns) and return true, and the lookup is made again.
   * NULL: not found is final. */
  bool (*resolve)(void *udata, const char *name, size_t len);
  /* A helper thread (base/worker.h) that host functions may hand part of their work to
   * (tpl_call_helper): encoders split big lists with it. NULL: none. */
  struct worker_s *helper;
  /* The render's budget (NULL: only the limits above). Execution checks the clock every few
   * thousand steps, and host functions that do much work in one call ask tpl_call_check. */
  tpl_budget_t *budget;
  /* out is a value being built (Helm's tpl), not output: it is bounded by the memory budget and not
   * counted as output. */
  bool nested;
} tpl_exec_opts_t;

/* The udata given in the execution options. */
void *tpl_call_exec_udata(tpl_call_t *call);
/* The helper thread given in the execution options (NULL: none). */
struct worker_s *tpl_call_helper(tpl_call_t *call);

/* Executes template `name` with dot = data, appending to out; values made
 * during execution live in arena. Returns 0, TPL_EEXEC/TPL_ELIMIT/TPL_EINVAL
 * with Go's error text in err, or TPL_ENOMEM. */
int tpl_set_execute(const tpl_set_t *set, const char *name, tpl_value_t data, tpl_arena_t *arena,
                    const tpl_exec_opts_t *opts, buf_t *out, buf_t *err);

/* ---- printing (Go's fmt) -------------------------------------------------- */

/* Appends v as fmt.Sprint prints it (%v). */
int tpl_fmt_value(buf_t *out, const tpl_value_t *v);
/* Appends fmt.Sprint(args...): spaces between operands when neither is a string. */
int tpl_fmt_sprint(buf_t *out, const tpl_value_t *args, size_t n);
/* Appends fmt.Sprintln(args...). */
int tpl_fmt_sprintln(buf_t *out, const tpl_value_t *args, size_t n);
/* Appends fmt.Sprintf(format, args...), with Go's %!verb(type=value) error forms. */
int tpl_fmt_sprintf(buf_t *out, const char *format, size_t flen, const tpl_value_t *args, size_t n);
/* Appends a float64 formatted like strconv.FormatFloat(f, fmt, prec, 64). */
int tpl_fmt_float(buf_t *out, double f, char fmt, int prec);
/* Appends s quoted like strconv.Quote. */
int tpl_fmt_quote(buf_t *out, const char *s, size_t n);

/* ---- loading values ---------------------------------------------------------- */

/* Builds a value from JSON text the way Go's encoding/json decodes into
 * interface{} (numbers become float64). 0, TPL_EINVAL (message in err) or TPL_ENOMEM. */
int tpl_value_from_json(tpl_arena_t *a, const char *json, size_t len, tpl_value_t *out, buf_t *err);
