/* The value model: arena, scalar/list/map values, Go type names, truth, JSON loading. */
#include <assert.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TPL__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TPL__ASAN 1
#endif
#endif

#include "helm/template/helm_funcs.h"
#include "helm/template/tpl.h"
#include "helm/template/tpl_internal.h"

/* ---- arena ---- */

typedef struct tpl__chunk_s {
  struct tpl__chunk_s *next;
  size_t size, used;
  uint64_t seq; /* creation order: tpl_arena_release frees the chunks made after its mark */
  void *ext;    /* a block handed over by tpl_arena_adopt (size 0, no data), freed with the chunk */
  _Alignas(16) unsigned char data[];
} tpl__chunk_t;

/* A remembered result (tpl_memo_get). */
#define TPL__MEMO_SLOTS 16
typedef struct tpl__memo_s {
  const void *key;  /* the list or map, or the text */
  size_t klen;      /* 0, or the text's length */
  int what;         /* the caller's kind of result */
  uint64_t *snap;   /* the values' shape when it was computed (tpl__snap); NULL for texts */
  size_t nsnap;
  char *text;       /* the result (malloc'd), or NULL: seen once, not stored yet */
  size_t len;
  /* The lists and maps of the tree (a set of their addresses): while none of them is written
   * (tpl__memo_wrote) the tree is as the snapshot says, and text is reused without comparing. */
  uintptr_t *cset;
  size_t ccap;      /* a power of two, or 0: no set (compare every time) */
  bool valid;       /* text is known to match the tree now */
} tpl__memo_t;

struct tpl_arena_s {
  tpl__chunk_t *head;
  size_t used, max;
  uint64_t seq;  /* chunks made so far */
  uint32_t gen;  /* generation of new lists and maps: one more at each mark */
  bool over;
  bool marked;   /* between tpl_arena_mark and tpl_arena_release */
  bool dirty;    /* since the mark, a list or map of an older generation was written */
  tpl__memo_t memo[TPL__MEMO_SLOTS];
  unsigned memo_next; /* slot the next new entry takes (round robin) */
  unsigned memo_valid; /* entries with valid set */
  uint64_t writes;     /* values stored into lists and maps so far (tpl_arena_writes) */
};

tpl_arena_t *tpl_arena_new(size_t max_bytes) {
  tpl_arena_t *a = calloc(1, sizeof(*a));
  if (!a) return NULL;
  a->max = max_bytes;
  return a;
}

void tpl_arena_free(tpl_arena_t *a) {
  if (!a) return;
  for (unsigned i = 0; i < TPL__MEMO_SLOTS; i++) free(a->memo[i].text), free(a->memo[i].snap), free(a->memo[i].cset);
  tpl__chunk_t *c = a->head;
  while (c) {
    tpl__chunk_t *n = c->next;
    free(c->ext);
    free(c);
    c = n;
  }
  free(a);
}

int tpl_arena_adopt(tpl_arena_t *a, void *p, size_t n) {
  if (a->max && (a->over || a->used + n > a->max)) {
    a->over = true;
    return TPL_ENOMEM;
  }
  tpl__chunk_t *c = malloc(sizeof *c);
  if (!c) return TPL_ENOMEM;
  c->size = c->used = 0;
  c->seq = ++a->seq;
  c->ext = p;
  /* behind the current chunk, as big blocks go, so that its free space is kept */
  if (a->head) {
    c->next = a->head->next;
    a->head->next = c;
  } else {
    c->next = NULL;
    a->head = c;
  }
  a->used += n;
  return 0;
}

/* n bytes at the given alignment (1 or 16), not cleared. */
static void *tpl__arena_take(tpl_arena_t *a, size_t n, size_t align) {
  tpl__chunk_t *c = a->head;
  size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
  if (a->max && (a->over || a->used + (c ? at - c->used : 0) + n > a->max)) {
    a->over = true;
    return NULL;
  }
  if (!c || at > c->size || c->size - at < n) {
    /* chunks grow with the arena, from 4 KiB to 64 KiB: small arenas (a tpl text's parse, a
     * template's own overlay) stay small */
    size_t want = 4096;
    while (want < 65536 && want < a->used) want *= 2;
    size_t sz = n > want - sizeof(tpl__chunk_t) ? n : want - sizeof(tpl__chunk_t);
    c = malloc(sizeof(tpl__chunk_t) + sz);
    if (!c) return NULL;
    c->size = sz;
    c->used = 0;
    c->seq = ++a->seq;
    c->ext = NULL;
    if (a->head && n > 16384) {
      /* Big blocks go behind the current chunk so its free space is kept. */
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = a->head;
      a->head = c;
    }
    at = 0;
  }
  void *p = c->data + at;
  a->used += (at - c->used) + n;
  c->used = at + n;
#ifdef TPL__ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
  return p;
}

void *tpl_arena_alloc(tpl_arena_t *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  void *p = tpl__arena_take(a, n, 16);
  if (p) memset(p, 0, n);
  return p;
}

tpl_arena_mark_t tpl_arena_mark(tpl_arena_t *a) {
  assert(!a->marked);
  tpl_arena_mark_t m = {a->head, a->head ? a->head->used : 0, a->used, a->seq};
  a->gen++;
  a->marked = true;
  a->dirty = false;
  return m;
}

bool tpl_arena_release(tpl_arena_t *a, const tpl_arena_mark_t *m) {
  a->marked = false;
  if (a->dirty) return false;
  /* Chunks made after the mark sit before the mark's chunk (new current chunks) or right behind
   * it (big blocks): unlinked, the mark's chunk is the head again. */
  tpl__chunk_t **pp = &a->head;
  while (*pp) {
    tpl__chunk_t *c = *pp;
    if (c->seq > m->seq) {
      *pp = c->next;
      free(c->ext);
      free(c);
    } else {
      pp = &c->next;
    }
  }
  tpl__chunk_t *h = m->chunk;
  if (h) {
#ifdef TPL__ASAN
    /* Under ASan the given-back bytes stay poisoned and are not handed out again, so that a
     * value that outlived its release is reported where it is used. */
    ASAN_POISON_MEMORY_REGION(h->data + m->used, h->used - m->used);
#else
    h->used = m->used;
#endif
  }
  a->used = m->total;
  return true;
}

/* Notes a write into a list or map of generation gen (see tpl_arena_mark). */
static inline void tpl__arena_wrote(tpl_arena_t *a, uint32_t gen) {
  if (gen != a->gen) a->dirty = true;
  a->writes++;
}

uint64_t tpl_arena_writes(const tpl_arena_t *a) { return a->writes; }

static void tpl__memo_wrote_slow(tpl_arena_t *a, const void *c);
/* Notes a write into list or map c for the memo: entries whose tree holds it are no longer valid
 * (NULL: any list may have changed, e.g. a push into an array that slices share). */
static inline void tpl__memo_wrote(tpl_arena_t *a, const void *c) {
  if (a->memo_valid) tpl__memo_wrote_slow(a, c);
}

/* ---- memo ----
 * A remembered result is reused only when the values are exactly as they were: the snapshot is the
 * sequence of every value's kind and type bytes, scalar bits, string pointer and length, and list
 * and map pointer and length (map keys too), in walk order. Strings are immutable, and whatever a
 * container made before the first mark refers to stays allocated until the arena is freed (a write
 * linking newer memory into it keeps that template's memory: tpl_arena_release), so equal pointers
 * mean equal contents. */

#define TPL_MEMO_TEXT 0x10000 /* keyed by a remembered text */
#define TPL__SNAP_MAX ((size_t)1 << 18) /* words; larger trees are not remembered */

typedef struct {
  uint64_t *w;
  size_t n, cap;
  const uint64_t *cmp; /* comparing: the stored snapshot */
  size_t ncmp;
  bool bad; /* too big, out of memory, or (comparing) different */
  const void **conts; /* making: the lists and maps seen (NULL after running out of memory) */
  size_t nc, ccap;
} tpl__snap_t;

/* Notes a list or map of the tree being snapshotted (for the memo's set of them). */
static void tpl__snap_cont(tpl__snap_t *s, const void *c) {
  if (s->nc == s->ccap) {
    size_t nc = s->ccap ? s->ccap * 2 : 64;
    const void **n = realloc(s->conts, nc * sizeof *n);
    if (!n) {
      free(s->conts);
      s->conts = NULL;
      s->ccap = (size_t)-1; /* stop noting: the entry goes without a set */
      return;
    }
    s->conts = n;
    s->ccap = nc;
  }
  if (s->conts) s->conts[s->nc++] = c;
}

/* One word of the snapshot: stored, or (cmp) compared with the stored one. */
static inline __attribute__((always_inline)) void tpl__snap_put(tpl__snap_t *s, uint64_t x, const bool cmp) {
  if (cmp) {
    if (s->n >= s->ncmp || s->cmp[s->n] != x) s->bad = true;
    s->n++;
    return;
  }
  if (s->bad) return;
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 256;
    uint64_t *nw = nc > TPL__SNAP_MAX ? NULL : realloc(s->w, nc * sizeof *nw);
    if (!nw) {
      s->bad = true;
      return;
    }
    s->w = nw;
    s->cap = nc;
  }
  s->w[s->n++] = x;
}

/* A string's pointer and length: one word when the length fits in the 16 bits above a user-space
 * address (below 2^48), two otherwise (the second with bit 63 set cannot be such a word). */
static inline __attribute__((always_inline)) void tpl__snap_text(tpl__snap_t *s, const char *p, size_t n,
                                                                 const bool cmp) {
  uint64_t a = (uintptr_t)p;
  if (n < ((size_t)1 << 15) && a < ((uint64_t)1 << 48)) {
    tpl__snap_put(s, a | (uint64_t)n << 48, cmp);
  } else {
    tpl__snap_put(s, a, cmp);
    tpl__snap_put(s, (uint64_t)n | (uint64_t)1 << 63, cmp);
  }
}

/* The walk, written once and made twice (tpl__snap_make, tpl__snap_cmp) so that each is a
 * straight loop. */
static inline __attribute__((always_inline)) void tpl__snap_walk(tpl__snap_t *s, const tpl_value_t *v, int depth,
                                                                 const bool cmp,
                                                                 void (*rec)(tpl__snap_t *, const tpl_value_t *, int)) {
  if (s->bad) return;
  if (depth > 10000) {
    s->bad = true;
    return;
  }
  tpl__snap_put(s, (uint64_t)v->kind | (uint64_t)v->elem << 8 | (uint64_t)v->iface << 16 | (uint64_t)v->view << 24, cmp);
  switch (v->kind) {
  case TPL_BOOL: tpl__snap_put(s, v->u.b, cmp); break;
  case TPL_INT:
  case TPL_INT64:
  case TPL_UINT64: tpl__snap_put(s, v->u.u, cmp); break;
  case TPL_FLOAT64: {
    uint64_t bits;
    memcpy(&bits, &v->u.f, sizeof bits);
    tpl__snap_put(s, bits, cmp);
    break;
  }
  case TPL_COMPLEX128: {
    uint64_t bits[2];
    memcpy(bits, &v->u.c, sizeof bits);
    tpl__snap_put(s, bits[0], cmp);
    tpl__snap_put(s, bits[1], cmp);
    break;
  }
  case TPL_STRING: tpl__snap_text(s, v->u.s.p, v->u.s.n, cmp); break;
  case TPL_LIST: {
    const tpl_list_t *l = v->u.list;
    tpl__snap_put(s, (uintptr_t)l, cmp);
    if (!l) break;
    if (!cmp) tpl__snap_cont(s, l);
    tpl__snap_put(s, l->len, cmp);
    tpl__snap_put(s, (uintptr_t)l->type | l->elem, cmp);
    /* a compact []byte is never written in place: where its bytes are says what they are */
    if (l->bytes) tpl__snap_put(s, (uintptr_t)l->bytes, cmp);
    else
      for (size_t i = 0; i < l->len && !s->bad; i++) rec(s, &l->items[i], depth + 1);
    break;
  }
  case TPL_MAP: {
    const tpl_map_t *m = v->u.map;
    tpl__snap_put(s, (uintptr_t)m, cmp);
    if (!m) break;
    if (!cmp) tpl__snap_cont(s, m);
    tpl__snap_put(s, m->len, cmp);
    tpl__snap_put(s, (uintptr_t)m->type, cmp);
    for (size_t i = 0; i < m->len && !s->bad; i++) {
      tpl__snap_text(s, m->ents[i].key, m->ents[i].klen, cmp);
      rec(s, &m->ents[i].val, depth + 1);
    }
    break;
  }
  case TPL_OBJECT:
    tpl__snap_put(s, (uintptr_t)v->u.obj, cmp);
    if (v->u.obj) tpl__snap_put(s, (uintptr_t)v->u.obj->self, cmp), tpl__snap_put(s, (uintptr_t)v->u.obj->type, cmp);
    break;
  case TPL_FUNC: tpl__snap_put(s, (uintptr_t)v->u.fn, cmp); break;
  default: break;
  }
}

static void tpl__snap_make(tpl__snap_t *s, const tpl_value_t *v, int depth) {
  tpl__snap_walk(s, v, depth, false, tpl__snap_make);
}
static void tpl__snap_cmp(tpl__snap_t *s, const tpl_value_t *v, int depth) {
  tpl__snap_walk(s, v, depth, true, tpl__snap_cmp);
}

/* Containers made before the first mark are never given back before the arena is freed. */
static const void *tpl__memo_root(const tpl_value_t *v) {
  if (v->kind == TPL_MAP && v->u.map && v->u.map->gen == 0) return v->u.map;
  if (v->kind == TPL_LIST && v->u.list && v->u.list->gen == 0) return v->u.list;
  return NULL;
}

static tpl__memo_t *tpl__memo_slot(tpl_arena_t *a, const void *key, size_t klen, int what) {
  for (unsigned i = 0; i < TPL__MEMO_SLOTS; i++) {
    tpl__memo_t *m = &a->memo[i];
    if (m->key == key && m->klen == klen && m->what == what) return m;
  }
  return NULL;
}

/* Whether v is now as the snapshot of m says. */
static bool tpl__memo_same(const tpl__memo_t *m, const tpl_value_t *v) {
  tpl__snap_t s = {.cmp = m->snap, .ncmp = m->nsnap};
  tpl__snap_cmp(&s, v, 0);
  return !s.bad && s.n == m->nsnap;
}

static size_t tpl__cset_slot(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull >> 32); }

static bool tpl__cset_has(const tpl__memo_t *m, uintptr_t p) {
  for (size_t i = tpl__cset_slot(p) & (m->ccap - 1);; i = (i + 1) & (m->ccap - 1)) {
    if (m->cset[i] == p) return true;
    if (!m->cset[i]) return false;
  }
}

/* m's set of the tree's lists and maps, from the ones the snapshot noted (none when they are not
 * known or memory is short: the entry is then compared every time). */
static void tpl__cset_build(tpl__memo_t *m, const void *const *conts, size_t nc, bool known) {
  free(m->cset);
  m->cset = NULL;
  m->ccap = 0;
  if (!known) return;
  size_t cap = 16;
  while (cap < 2 * nc + 2) cap *= 2;
  uintptr_t *set = calloc(cap, sizeof *set);
  if (!set) return;
  for (size_t k = 0; k < nc; k++) {
    uintptr_t p = (uintptr_t)conts[k];
    size_t i = tpl__cset_slot(p) & (cap - 1);
    while (set[i] && set[i] != p) i = (i + 1) & (cap - 1);
    set[i] = p;
  }
  m->cset = set;
  m->ccap = cap;
}

static void tpl__memo_set_valid(tpl_arena_t *a, tpl__memo_t *m, bool valid) {
  if (valid && !m->ccap) valid = false; /* no set: cannot tell writes apart */
  if (m->valid == valid) return;
  m->valid = valid;
  if (valid) a->memo_valid++;
  else a->memo_valid--;
}

static void tpl__memo_wrote_slow(tpl_arena_t *a, const void *c) {
  for (unsigned i = 0; i < TPL__MEMO_SLOTS; i++) {
    tpl__memo_t *m = &a->memo[i];
    if (m->valid && (!c || tpl__cset_has(m, (uintptr_t)c))) tpl__memo_set_valid(a, m, false);
  }
}

void tpl_arena_note_write(tpl_arena_t *a, const void *c) { tpl__memo_wrote(a, c); }

const char *tpl_memo_get(tpl_arena_t *a, const tpl_value_t *v, int what, size_t *len) {
  const void *key = tpl__memo_root(v);
  tpl__memo_t *m = key ? tpl__memo_slot(a, key, 0, what) : NULL;
  if (!m || !m->text) return NULL;
  if (!m->valid) {
    if (!tpl__memo_same(m, v)) return NULL;
    tpl__memo_set_valid(a, m, true);
  }
  *len = m->len;
  return m->text;
}

static tpl__memo_t *tpl__memo_new(tpl_arena_t *a, const void *key, size_t klen, int what) {
  tpl__memo_t *m = &a->memo[a->memo_next++ % TPL__MEMO_SLOTS];
  tpl__memo_set_valid(a, m, false);
  free(m->text);
  free(m->snap);
  free(m->cset);
  *m = (tpl__memo_t){.key = key, .klen = klen, .what = what};
  return m;
}

static char *tpl__memo_text(tpl__memo_t *m, const char *text, size_t len) {
  char *t = malloc(len + 1);
  if (!t) return NULL;
  memcpy(t, text, len);
  t[len] = 0;
  m->text = t;
  m->len = len;
  return t;
}

const char *tpl_memo_put(tpl_arena_t *a, const tpl_value_t *v, int what, const char *text, size_t len) {
  const void *key = tpl__memo_root(v);
  if (!key) return NULL;
  tpl__memo_t *m = tpl__memo_slot(a, key, 0, what);
  tpl__snap_t s = {0};
  tpl__snap_make(&s, v, 0);
  if (s.bad) {
    free(s.w);
    free(s.conts);
    return NULL;
  }
  bool again = m && m->snap && m->nsnap == s.n && !memcmp(m->snap, s.w, s.n * sizeof *s.w);
  if (!m) m = tpl__memo_new(a, key, 0, what);
  if (!again && s.n && s.n < s.cap) {
    uint64_t *w = realloc(s.w, s.n * sizeof *w); /* kept: exact size */
    if (w) s.w = w;
  }
  if (!again) {
    /* the first time with these values: noted only, so that a result computed once is not kept */
    tpl__memo_set_valid(a, m, false);
    free(m->text);
    m->text = NULL;
    free(m->snap);
    m->snap = s.w;
    m->nsnap = s.n;
    tpl__cset_build(m, s.conts, s.nc, s.ccap != (size_t)-1);
    free(s.conts);
    return NULL;
  }
  free(s.w);
  free(s.conts);
  const char *t = m->text ? m->text : tpl__memo_text(m, text, len);
  if (t) tpl__memo_set_valid(a, m, true);
  return t;
}

const char *tpl_memo_text_get(tpl_arena_t *a, const char *key, size_t klen, int what, size_t *len) {
  tpl__memo_t *m = tpl__memo_slot(a, key, klen, what | TPL_MEMO_TEXT);
  if (!m || !m->text) return NULL;
  *len = m->len;
  return m->text;
}

const char *tpl_memo_text_put(tpl_arena_t *a, const char *key, size_t klen, int what, const char *text, size_t len) {
  tpl__memo_t *m = tpl__memo_slot(a, key, klen, what | TPL_MEMO_TEXT);
  if (!m) m = tpl__memo_new(a, key, klen, what | TPL_MEMO_TEXT);
  return m->text ? m->text : tpl__memo_text(m, text, len);
}

bool tpl_arena_memo_owns(const tpl_arena_t *a, const char *p, size_t n) {
  for (unsigned i = 0; i < TPL__MEMO_SLOTS; i++)
    if (a->memo[i].text == p && a->memo[i].len == n && p) return true;
  return false;
}

char *tpl_arena_strndup(tpl_arena_t *a, const char *s, size_t n) {
  char *p = tpl__arena_take(a, n + 1, 1); /* text: packed, not cleared */
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *tpl_arena_text(tpl_arena_t *a, size_t n) {
  char *p = tpl__arena_take(a, n + 1, 1);
  if (p) p[n] = 0;
  return p;
}

size_t tpl_arena_used(const tpl_arena_t *a) { return a->used; }
bool tpl_arena_over_limit(const tpl_arena_t *a) { return a->over; }
size_t tpl_arena_room(const tpl_arena_t *a) {
  if (!a->max) return SIZE_MAX;
  return a->over || a->used >= a->max ? 0 : a->max - a->used;
}
void tpl_arena_set_over(tpl_arena_t *a) {
  if (a->max) a->over = true;
}

/* ---- scalars ---- */

tpl_value_t tpl_value_str_copy(tpl_arena_t *a, const char *p, size_t n) {
  char *c = tpl_arena_strndup(a, p, n);
  if (!c) return tpl_value_invalid();
  return tpl_value_strn(c, n);
}


tpl_value_t tpl__zero_of_elem(uint8_t elem) {
  switch (elem) {
  case TPL_ELEM_STRING: return tpl_value_strn("", 0);
  case TPL_ELEM_INT: return tpl_value_int(0);
  case TPL_ELEM_INT64: return tpl_value_int64(0);
  case TPL_ELEM_FLOAT64: return tpl_value_float(0);
  case TPL_ELEM_BOOL: return tpl_value_bool(false);
  case TPL_ELEM_UINT8: {
    tpl_value_t v = tpl_value_uint64(0);
    v.elem = 1;
    return v;
  }
  case TPL_ELEM_BYTES: {
    tpl_value_t v = {0}; /* a nil []byte */
    v.kind = TPL_LIST;
    v.elem = TPL_ELEM_UINT8;
    return v;
  }
  default: return tpl_value_nil();
  }
}

/* Allocates n items and fills them with the element type's zero value. */
static tpl_value_t *tpl__items_new(tpl_arena_t *a, uint8_t elem, size_t n) {
  if (n > SIZE_MAX / sizeof(tpl_value_t)) return NULL;
  tpl_value_t *it = tpl_arena_alloc(a, n * sizeof(tpl_value_t));
  if (!it) return NULL;
  tpl_value_t z = tpl__zero_of_elem(elem);
  for (size_t i = 0; i < n; i++) it[i] = z;
  return it;
}

tpl_value_t tpl_value_list_new(tpl_arena_t *a, tpl_elem_t elem, size_t cap) {
  tpl_value_t v = {0};
  tpl_list_t *l = tpl_arena_alloc(a, sizeof(*l));
  if (!l) return v;
  l->elem = (uint8_t)elem;
  l->gen = a->gen;
  if (cap) {
    l->items = tpl__items_new(a, (uint8_t)elem, cap);
    if (!l->items) return v;
    l->cap = cap;
  }
  v.kind = TPL_LIST;
  v.elem = (uint8_t)elem;
  v.u.list = l;
  return v;
}

tpl_value_t tpl_value_bytes_ref(tpl_arena_t *a, const char *p, size_t n) {
  tpl_value_t v = tpl_value_list_new(a, TPL_ELEM_UINT8, 0);
  if (v.kind != TPL_LIST) return v;
  /* an empty []byte is still non-nil: any pointer will do, nothing is read through it */
  v.u.list->bytes = (const unsigned char *)(p && n ? p : "");
  v.u.list->len = v.u.list->cap = n;
  return v;
}

tpl_value_t tpl_value_bytes(tpl_arena_t *a, const char *p, size_t n) {
  char *c = tpl_arena_text(a, n);
  if (!c) return tpl_value_invalid();
  if (n) memcpy(c, p, n);
  return tpl_value_bytes_ref(a, c, n);
}

int tpl_list_expand(tpl_arena_t *a, tpl_list_t *l) {
  if (!l->bytes) return 0;
  tpl_value_t *it = l->cap ? tpl__items_new(a, TPL_ELEM_UINT8, l->cap) : NULL;
  if (l->cap && !it) return TPL_ENOMEM;
  for (size_t i = 0; i < l->cap; i++) it[i].u.u = l->bytes[i];
  l->items = it;
  l->bytes = NULL;
  return 0;
}

tpl_list_t *tpl_list_slice(tpl_arena_t *a, const tpl_list_t *l, size_t start, size_t len, size_t cap) {
  tpl_list_t *nl = tpl_arena_alloc(a, sizeof(*nl));
  if (!nl) return NULL;
  *nl = *l;
  if (l->bytes) nl->bytes = l->bytes + start;
  else nl->items = l->items ? l->items + start : NULL;
  nl->len = len;
  nl->cap = cap;
  return nl;
}

const char *tpl_value_bytes_text(tpl_arena_t *a, const tpl_value_t *v, size_t *n) {
  const tpl_list_t *l = v->kind == TPL_LIST ? v->u.list : NULL;
  *n = l ? l->len : 0;
  if (!l) return "";
  if (l->bytes) return (const char *)l->bytes;
  char *p = tpl_arena_text(a, *n);
  if (!p) return NULL;
  for (size_t i = 0; i < *n; i++) p[i] = (char)l->items[i].u.u;
  return p;
}

tpl_value_t tpl_value_map_new(tpl_arena_t *a, tpl_elem_t elem) {
  tpl_value_t v = {0};
  tpl_map_t *m = tpl_arena_alloc(a, sizeof(*m));
  if (!m) return v;
  m->gen = a->gen;
  v.kind = TPL_MAP;
  v.elem = (uint8_t)elem;
  v.u.map = m;
  return v;
}

int tpl_list_push(tpl_arena_t *a, tpl_list_t *l, tpl_value_t v) {
  if (tpl_list_expand(a, l)) return TPL_ENOMEM;
  tpl__arena_wrote(a, l->gen);
  /* into spare capacity: a slice of another list may share that array */
  tpl__memo_wrote(a, l->len < l->cap ? NULL : l);
  if (l->len >= l->cap) {
    size_t esize = 16;
    bool noscan = false;
    switch (l->elem) {
    case TPL_ELEM_INT: case TPL_ELEM_INT64: case TPL_ELEM_FLOAT64: esize = 8; noscan = true; break;
    case TPL_ELEM_BOOL: esize = 1; noscan = true; break;
    default: break;
    }
    size_t nc = tpl_go_append_cap(l->cap, l->len + 1, esize, noscan);
    tpl_value_t *ni = tpl__items_new(a, l->elem, nc);
    if (!ni) return TPL_ENOMEM;
    if (l->len) memcpy(ni, l->items, l->len * sizeof(*ni));
    l->items = ni;
    l->cap = nc;
  }
  l->items[l->len++] = v;
  return 0;
}

/* ---- maps ---- */

static uint32_t tpl__hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void tpl__map_reindex(tpl_map_t *m) {
  memset(m->index, 0, m->icap * sizeof(uint32_t));
  for (size_t i = 0; i < m->len; i++) {
    size_t j = tpl__hash(m->ents[i].key, m->ents[i].klen) & (m->icap - 1);
    while (m->index[j]) j = (j + 1) & (m->icap - 1);
    m->index[j] = (uint32_t)(i + 1);
  }
}

static long tpl__map_find(const tpl_map_t *m, const char *key, size_t klen) {
  if (!m || m->len == 0) return -1;
  if (!m->index) {
    for (size_t i = 0; i < m->len; i++)
      if (m->ents[i].klen == klen && memcmp(m->ents[i].key, key, klen) == 0) return (long)i;
    return -1;
  }
  size_t j = tpl__hash(key, klen) & (m->icap - 1);
  while (m->index[j]) {
    const tpl_map_entry_t *e = &m->ents[m->index[j] - 1];
    if (e->klen == klen && memcmp(e->key, key, klen) == 0) return (long)(m->index[j] - 1);
    j = (j + 1) & (m->icap - 1);
  }
  return -1;
}

tpl_value_t *tpl_map_get(const tpl_map_t *m, const char *key, size_t klen) {
  long i = tpl__map_find(m, key, klen);
  return i < 0 ? NULL : &m->ents[i].val;
}

int tpl_map_reserve(tpl_arena_t *a, tpl_map_t *m, size_t n) {
  if (m->cap >= n) return 0;
  tpl__arena_wrote(a, m->gen);
  if (n > SIZE_MAX / sizeof(tpl_map_entry_t)) return TPL_ENOMEM;
  tpl_map_entry_t *ne = tpl_arena_alloc(a, n * sizeof(*ne));
  if (!ne) return TPL_ENOMEM;
  if (m->len) memcpy(ne, m->ents, m->len * sizeof(*ne));
  m->ents = ne;
  m->cap = n;
  return 0;
}

static int tpl__map_put(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v, bool copy);

int tpl_map_set(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v) {
  return tpl__map_put(a, m, key, klen, v, true);
}

int tpl_map_set_key(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v) {
  return tpl__map_put(a, m, key, klen, v, false);
}

static int tpl__map_put(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen, tpl_value_t v, bool copy) {
  tpl__arena_wrote(a, m->gen);
  tpl__memo_wrote(a, m);
  long i = tpl__map_find(m, key, klen);
  if (i >= 0) {
    m->ents[i].val = v;
    return 0;
  }
  if (m->len == m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 4;
    tpl_map_entry_t *ne = tpl_arena_alloc(a, nc * sizeof(*ne));
    if (!ne) return TPL_ENOMEM;
    if (m->len) memcpy(ne, m->ents, m->len * sizeof(*ne));
    m->ents = ne;
    m->cap = nc;
  }
  const char *k = copy ? tpl_arena_strndup(a, key, klen) : key;
  if (!k) return TPL_ENOMEM;
  m->ents[m->len].key = k;
  m->ents[m->len].klen = klen;
  m->ents[m->len].val = v;
  m->len++;
  if (m->len > 8 && m->len * 2 > m->icap) {
    size_t ic = 32;
    while (ic < m->len * 4) ic *= 2;
    uint32_t *ni = tpl_arena_alloc(a, ic * sizeof(uint32_t));
    if (!ni) return TPL_ENOMEM;
    m->index = ni;
    m->icap = (uint32_t)ic;
    tpl__map_reindex(m);
  } else if (m->index) {
    size_t j = tpl__hash(k, klen) & (m->icap - 1);
    while (m->index[j]) j = (j + 1) & (m->icap - 1);
    m->index[j] = (uint32_t)m->len;
  }
  return 0;
}

bool tpl_map_delete(tpl_arena_t *a, tpl_map_t *m, const char *key, size_t klen) {
  long i = tpl__map_find(m, key, klen);
  if (i < 0) return false;
  tpl__memo_wrote(a, m);
  memmove(&m->ents[i], &m->ents[i + 1], (m->len - (size_t)i - 1) * sizeof(m->ents[0]));
  m->len--;
  if (m->index) tpl__map_reindex(m);
  return true;
}

static int tpl__keycmp(const void *x, const void *y) {
  const tpl_map_entry_t *a = *(const tpl_map_entry_t *const *)x, *b = *(const tpl_map_entry_t *const *)y;
  size_t n = a->klen < b->klen ? a->klen : b->klen;
  int c = memcmp(a->key, b->key, n);
  if (c) return c;
  return a->klen < b->klen ? -1 : a->klen > b->klen;
}

const tpl_map_entry_t **tpl_map_sorted(tpl_arena_t *a, const tpl_map_t *m) {
  if (!m || !m->len) return NULL;
  const tpl_map_entry_t **v = tpl_arena_alloc(a, m->len * sizeof(*v));
  if (!v) return NULL;
  for (size_t i = 0; i < m->len; i++) v[i] = &m->ents[i];
  tpl__sort_entries(v, m->len);
  return v;
}

void tpl__sort_entries(const tpl_map_entry_t **es, size_t n) {
  /* maps built from values come in key order (values_coalesce sorts them): one pass instead of a sort */
  size_t i = 1;
  while (i < n && tpl__keycmp(&es[i - 1], &es[i]) < 0) i++;
  if (i < n) qsort(es, n, sizeof(*es), tpl__keycmp);
}

/* ---- type names, truth, length ---- */

static const char *const tpl__elem_names[] = {"interface {}", "string", "int", "int64", "float64", "bool", "uint8", "[]uint8"};

int tpl_value_type_name(const tpl_value_t *v, buf_t *out) {
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return buf_puts(out, "<nil>");
  case TPL_BOOL: return buf_puts(out, "bool");
  case TPL_INT: return buf_puts(out, "int");
  case TPL_INT64: return buf_puts(out, "int64");
  case TPL_UINT64: return buf_puts(out, v->elem == 1 ? "uint8" : "uint64");
  case TPL_FLOAT64: return buf_puts(out, "float64");
  case TPL_STRING: return buf_puts(out, "string");
  case TPL_LIST: {
    const tpl_type_t *t = tpl_value_named(v);
    if (t) return buf_puts(out, t->name);
    return buf_printf(out, "[]%s", tpl__elem_names[v->elem]);
  }
  case TPL_MAP: {
    const tpl_type_t *t = tpl_value_named(v);
    if (t) return buf_puts(out, t->name);
    return buf_printf(out, "map[string]%s", tpl__elem_names[v->elem]);
  }
  case TPL_OBJECT: return buf_puts(out, v->u.obj->type->name);
  case TPL_FUNC: return buf_puts(out, v->u.fn->go_type ? v->u.fn->go_type : "func(...interface {}) (interface {}, error)");
  case TPL_COMPLEX128: return buf_puts(out, "complex128");
  }
  return 0;
}

bool tpl_value_is_bytes(const tpl_value_t *v) {
  return v->kind == TPL_LIST && v->elem == TPL_ELEM_UINT8 && !tpl_value_named(v);
}

const tpl_type_t *tpl_value_named(const tpl_value_t *v) {
  if (v->kind == TPL_MAP) {
    if (v->view == TPL_VIEW_VALUES) return tpl_helm_values_type();
    return v->view == TPL_VIEW_OWN && v->u.map ? v->u.map->type : NULL;
  }
  if (v->kind == TPL_LIST) return v->view == TPL_VIEW_OWN && v->u.list ? v->u.list->type : NULL;
  return NULL;
}

int64_t tpl_value_len(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_STRING: return (int64_t)v->u.s.n;
  case TPL_LIST: return v->u.list ? (int64_t)v->u.list->len : 0;
  case TPL_MAP: return v->u.map ? (int64_t)v->u.map->len : 0;
  default: return -1;
  }
}

bool tpl_value_truth(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return false;
  case TPL_BOOL: return v->u.b;
  case TPL_INT:
  case TPL_INT64: return v->u.i != 0;
  case TPL_UINT64: return v->u.u != 0;
  case TPL_FLOAT64: return v->u.f != 0;
  case TPL_COMPLEX128: return v->u.c.re != 0 || v->u.c.im != 0;
  case TPL_STRING:
  case TPL_LIST:
  case TPL_MAP: return tpl_value_len(v) > 0;
  case TPL_OBJECT:
  case TPL_FUNC: return true;
  }
  return false;
}

/* ---- JSON ---- */

static int tpl__from_cjson(tpl_arena_t *a, const cJSON *j, tpl_value_t *out, int depth) {
  if (depth > 10000) return TPL_EINVAL;
  if (cJSON_IsNull(j)) {
    *out = tpl_value_nil();
  } else if (cJSON_IsBool(j)) {
    *out = tpl_value_bool(cJSON_IsTrue(j));
  } else if (cJSON_IsNumber(j)) {
    *out = tpl_value_float(j->valuedouble);
  } else if (cJSON_IsString(j)) {
    *out = tpl_value_str_copy(a, j->valuestring, strlen(j->valuestring));
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  } else if (cJSON_IsArray(j)) {
    /* encoding/json appends to make([]any, 0): Go's append capacity. */
    *out = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    for (const cJSON *c = j->child; c; c = c->next) {
      tpl_value_t v;
      int rc = tpl__from_cjson(a, c, &v, depth + 1);
      if (rc) return rc;
      if (tpl_list_push(a, out->u.list, v)) return TPL_ENOMEM;
    }
  } else if (cJSON_IsObject(j)) {
    *out = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    for (const cJSON *c = j->child; c; c = c->next) {
      tpl_value_t v;
      int rc = tpl__from_cjson(a, c, &v, depth + 1);
      if (rc) return rc;
      if (tpl_map_set(a, out->u.map, c->string, strlen(c->string), v)) return TPL_ENOMEM;
    }
  } else {
    return TPL_EINVAL;
  }
  return 0;
}

int tpl_value_from_json(tpl_arena_t *a, const char *json, size_t len, tpl_value_t *out, buf_t *err) {
  cJSON *j = cJSON_ParseWithLength(json, len);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    if (err) buf_printf(err, "invalid JSON at byte %ld", at ? (long)(at - json) : 0L);
    return TPL_EINVAL;
  }
  int rc = tpl__from_cjson(a, j, out, 0);
  cJSON_Delete(j);
  if (rc == TPL_EINVAL && err) buf_puts(err, "JSON nested too deeply");
  return rc;
}

/* ---- stack segments ---- */

#define TPL__SEG_SIZE ((size_t)16 << 20)
#define TPL__STACK_MARGIN ((size_t)512 << 10)
#define TPL__MAX_STACK ((size_t)512 << 20)

typedef struct tpl__seg_s {
  char *mem; /* mapping: a guard page, then the usable stack */
  size_t size;
} tpl__seg_t;

typedef struct tpl__jump_s {
  int (*fn)(void *);
  void *arg;
  int rc;
#ifdef TPL__ASAN
  const void *from_bottom;
  size_t from_size;
#endif
} tpl__jump_t;

static void tpl__seg_trampoline(unsigned hi, unsigned lo) {
  tpl__jump_t *j = (tpl__jump_t *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
#ifdef TPL__ASAN
  __sanitizer_finish_switch_fiber(NULL, &j->from_bottom, &j->from_size);
#endif
  j->rc = j->fn(j->arg);
#ifdef TPL__ASAN
  /* This context ends here (uc_link resumes the caller): no fake stack to keep. */
  __sanitizer_start_switch_fiber(NULL, j->from_bottom, j->from_size);
#endif
}

void tpl__stack_init(tpl__stack_t *st, size_t max) {
  uintptr_t base = (uintptr_t)__builtin_frame_address(0);
  memset(st, 0, sizeof *st);
  st->max = max ? max : TPL__MAX_STACK;
  st->limit = base > TPL__CALLER_STACK ? base - TPL__CALLER_STACK : 0;
}

void tpl__stack_fini(tpl__stack_t *st) {
  for (size_t i = 0; i < st->nsegs; i++) munmap(st->segs[i].mem, st->segs[i].size);
  free(st->segs);
  st->segs = NULL;
  st->nsegs = 0;
}

int tpl__stack_call(tpl__stack_t *st, int (*fn)(void *), void *arg, int *rc) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (st->depth == st->nsegs) {
    if (st->total + TPL__SEG_SIZE > st->max) return TPL_ELIMIT;
    tpl__seg_t *ns = realloc(st->segs, (st->nsegs + 1) * sizeof(*ns));
    if (!ns) return TPL_ENOMEM;
    st->segs = ns;
    size_t size = TPL__SEG_SIZE + page;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return TPL_ENOMEM;
    mprotect(m, page, PROT_NONE); /* guard page: an overrun faults instead of corrupting memory */
    st->segs[st->nsegs].mem = m;
    st->segs[st->nsegs].size = size;
    st->nsegs++;
    st->total += TPL__SEG_SIZE;
  }
  tpl__seg_t *seg = &st->segs[st->depth];
  tpl__jump_t j = {.fn = fn, .arg = arg, .rc = 0};
  ucontext_t back, ctx;
  if (getcontext(&ctx) != 0) return TPL_ENOMEM;
  ctx.uc_stack.ss_sp = seg->mem + page;
  ctx.uc_stack.ss_size = seg->size - page;
  ctx.uc_link = &back;
  uintptr_t p = (uintptr_t)&j;
  makecontext(&ctx, (void (*)(void))tpl__seg_trampoline, 2, (unsigned)(p >> 32), (unsigned)(p & 0xFFFFFFFFu));
  uintptr_t saved = st->limit;
  st->limit = (uintptr_t)(seg->mem + page) + TPL__STACK_MARGIN;
  st->depth++;
#ifdef TPL__ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(&fake, seg->mem + page, seg->size - page);
#endif
  int sw = swapcontext(&back, &ctx);
#ifdef TPL__ASAN
  __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
  st->depth--;
  st->limit = saved;
  if (sw != 0) return TPL_ENOMEM;
  *rc = j.rc;
  return 0;
}
