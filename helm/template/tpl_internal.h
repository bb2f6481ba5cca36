/* Internal declarations shared by the template engine's files. */
#pragma once
#include "helm/template/tpl.h"
#include "helm/template/unicode.h"

/* ---- deep recursion on mmap'd stack segments (value.c) ----
 * The parser and the executor recurse. They run on the caller's stack for
 * its first TPL__CALLER_STACK bytes, then continue on segments of 16 MiB
 * (address space reserved, pages touched only as used) entered with
 * swapcontext, up to max bytes in all: deep templates reach Go's own limits
 * and errors, hostile ones get a clear error, nothing overflows. */
#define TPL__CALLER_STACK ((size_t)1 << 20)
typedef struct tpl__stack_s {
  uintptr_t limit;          /* below this address, continue on the next segment */
  struct tpl__seg_s *segs;  /* segments, reused in LIFO order */
  size_t nsegs, depth, total, max;
} tpl__stack_t;
/* Starts tracking from the calling frame; max 0 means 512 MiB. */
void tpl__stack_init(tpl__stack_t *st, size_t max);
/* Unmaps the segments. */
void tpl__stack_fini(tpl__stack_t *st);
/* True when the current frame is below the limit (call tpl__stack_call). */
static inline bool tpl__stack_low(const tpl__stack_t *st) {
  return (uintptr_t)__builtin_frame_address(0) < st->limit;
}
/* Runs *rc = fn(arg) on the next segment: 0, TPL_ELIMIT (max reached) or TPL_ENOMEM.
 * fn must return normally (no longjmp out of it). */
int tpl__stack_call(tpl__stack_t *st, int (*fn)(void *), void *arg, int *rc);

/* The zero value of a list/map element type (nil for interface {}). */
tpl_value_t tpl__zero_of_elem(uint8_t elem);

/* ---- UTF-8 and quoting (fmt.c) ---- */
size_t tpl__utf8_decode(const char *s, size_t n, int32_t *r);
size_t tpl__utf8_encode(int32_t r, char *out);
size_t tpl__utf8_count(const char *s, size_t n);
bool tpl__is_print(int32_t r);
int tpl__quote_rune(buf_t *out, int32_t r, char q, bool ascii);
void tpl__sort_entries(const tpl_map_entry_t **es, size_t n);

/* ---- parse trees (parse.c) ---- */

typedef enum {
  TPL_N_LIST, TPL_N_TEXT, TPL_N_ACTION, TPL_N_COMMENT, TPL_N_IF, TPL_N_RANGE, TPL_N_WITH,
  TPL_N_TEMPLATE, TPL_N_BREAK, TPL_N_CONTINUE, TPL_N_PIPE, TPL_N_COMMAND, TPL_N_FIELD,
  TPL_N_CHAIN, TPL_N_VARIABLE, TPL_N_IDENT, TPL_N_DOT, TPL_N_NIL, TPL_N_BOOL, TPL_N_NUMBER,
  TPL_N_STRING, TPL_N_END, TPL_N_ELSE,
} tpl_node_type_t;

typedef struct tpl_node_s tpl_node_t;
typedef struct tpl_tree_s tpl_tree_t;

typedef struct tpl_nodes_s {
  tpl_node_t **v;
  size_t n, cap;
} tpl_nodes_t;

enum { TPL_NUM_INT = 1, TPL_NUM_UINT = 2, TPL_NUM_FLOAT = 4, TPL_NUM_COMPLEX = 8 };

/* A parse tree node (80 bytes). The fields after slen share storage: read
 * only those of the node's own type (listed per group below); the others
 * alias them. */
struct tpl_node_s {
  uint8_t type;       /* tpl_node_type_t */
  bool flag;          /* bool value; pipe: is assignment */
  uint8_t num;        /* TPL_NUM_* flags */
  uint32_t pos;       /* byte offset in the tree's text */
  const tpl_tree_t *tree;
  const char *str;    /* text, identifier, template name, unquoted string, number text */
  size_t slen;
  union {
    struct {              /* LIST, COMMAND, PIPE (exact-size arrays: cap == n) */
      tpl_nodes_t kids;   /* list items, pipe commands, command args */
      tpl_nodes_t decl;   /* pipe declarations (variables) */
    };
    struct {              /* ACTION, TEMPLATE (pipe, may be NULL), IF, RANGE, WITH */
      tpl_node_t *pipe, *list, *else_list;
    };
    struct {              /* FIELD, VARIABLE, CHAIN */
      tpl_node_t *node;   /* CHAIN: the operand the fields apply to */
      const char **idents; /* the identifiers */
      size_t *ilens;
      size_t nidents;
    };
    struct {              /* IDENT */
      const tpl_func_t *fn; /* host function (checked first, as Go does), or NULL */
      int builtin;        /* builtin id, or -1 */
    };
    struct {              /* NUMBER */
      int64_t i;
      uint64_t u;
      double f;
      double cre, cim;    /* complex constant */
    };
    struct {              /* STRING */
      const char *quoted; /* original text with quotes */
      size_t qlen;
    };
  };
};

struct tpl_tree_s {
  const char *name;       /* template name */
  const char *parse_name; /* top-level template name during parsing, for errors */
  const char *text;       /* the whole text it was parsed from */
  size_t text_len;
  tpl_node_t *root;
};

/* Builtin function ids. */
enum {
  TPL_B_AND, TPL_B_CALL, TPL_B_HTML, TPL_B_INDEX, TPL_B_SLICE, TPL_B_JS, TPL_B_LEN, TPL_B_NOT,
  TPL_B_OR, TPL_B_PRINT, TPL_B_PRINTF, TPL_B_PRINTLN, TPL_B_URLQUERY, TPL_B_EQ, TPL_B_GE,
  TPL_B_GT, TPL_B_LE, TPL_B_LT, TPL_B_NE, TPL_B_COUNT
};
/* The builtin with that name, or -1. */
int tpl__builtin_find(const char *name, size_t len);
/* Builtin signatures (tpl_func_t.sig letters) and Go types. */
extern const char *const tpl__builtin_names[TPL_B_COUNT];
extern const char *const tpl__builtin_sigs[TPL_B_COUNT];

/* Appends the Go String() form of a node (for error contexts). */
int tpl__node_string(const tpl_node_t *n, buf_t *out);
/* Finds the template of that name in the set; NULL when absent. */
const tpl_tree_t *tpl__set_lookup(const tpl_set_t *set, const char *name, size_t len);
/* The function table of the running execution (NULL in plain Go mode). */
const tpl_funcs_t *tpl__call_funcs(tpl_call_t *call);
/* The set's function table. */
const tpl_funcs_t *tpl__set_funcs(const tpl_set_t *set);
/* Bytes the set's parse trees (and copies of their texts) take in its arena. */
size_t tpl__set_arena_used(const tpl_set_t *set);
/* Formats an int64 rune with %#U into out (for lexer errors). */
int tpl__fmt_sharp_u(buf_t *out, int32_t r);

/* tpl_fmt_value/sprint/sprintln/sprintf that stop with TPL_ELIMIT once out would grow past max
 * (0: no limit): a structure that shares its lists and maps prints far more than it holds. */
int tpl__fmt_value_max(buf_t *out, const tpl_value_t *v, size_t max);
int tpl__fmt_sprint_max(buf_t *out, const tpl_value_t *args, size_t n, size_t max);
int tpl__fmt_sprintln_max(buf_t *out, const tpl_value_t *args, size_t n, size_t max);
int tpl__fmt_sprintf_max(buf_t *out, const char *format, size_t end, const tpl_value_t *a, size_t n, size_t max);
