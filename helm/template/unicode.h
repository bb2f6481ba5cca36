/* Go's unicode package predicates and case mappings, from tables generated
 * with Go itself (unicode_tables.c; see tests/oracle/template/gentables).
 * Pure functions over constant data: safe from any thread. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tpl_urange_s {
  uint32_t lo, hi;
} tpl_urange_t;

typedef struct tpl_utable_s {
  const tpl_urange_t *r;
  size_t n;
} tpl_utable_t;

typedef struct tpl_ucase_s {
  uint32_t lo, hi;
  int32_t delta;
} tpl_ucase_t;

typedef struct tpl_ucases_s {
  const tpl_ucase_t *r;
  size_t n;
} tpl_ucases_t;

/* Table order in tpl_utables (as the generator writes them). */
enum {
  TPL_U_PRINT, TPL_U_GRAPHIC, TPL_U_LETTER, TPL_U_DIGIT, TPL_U_NUMBER, TPL_U_SPACE, TPL_U_UPPER, TPL_U_LOWER,
  TPL_U_TITLE, TPL_U_PUNCT, TPL_U_SYMBOL, TPL_U_MARK, TPL_U_CONTROL, TPL_U_COUNT
};
extern const tpl_utable_t tpl_utables[TPL_U_COUNT];
extern const tpl_ucases_t tpl_ucases[3]; /* ToUpper, ToLower, ToTitle */
extern const uint32_t tpl_go_size_classes[];
extern const unsigned tpl_go_size_classes_n;

/* True when r is in table t (one of TPL_U_*). */
bool tpl_unicode_is(int t, int32_t r);
/* unicode.IsPrint. */
bool tpl_unicode_is_print(int32_t r);
/* unicode.IsGraphic. */
bool tpl_unicode_is_graphic(int32_t r);
/* unicode.IsLetter. */
bool tpl_unicode_is_letter(int32_t r);
/* unicode.IsDigit. */
bool tpl_unicode_is_digit(int32_t r);
/* unicode.IsSpace. */
bool tpl_unicode_is_space(int32_t r);
/* unicode.IsUpper. */
bool tpl_unicode_is_upper(int32_t r);
/* unicode.IsLower. */
bool tpl_unicode_is_lower(int32_t r);
/* unicode.IsPunct. */
bool tpl_unicode_is_punct(int32_t r);
/* unicode.ToUpper. */
int32_t tpl_unicode_to_upper(int32_t r);
/* unicode.ToLower. */
int32_t tpl_unicode_to_lower(int32_t r);
/* unicode.ToTitle. */
int32_t tpl_unicode_to_title(int32_t r);
/* The capacity Go's append gives a slice of elements of esize bytes (noscan:
 * the element type holds no pointers) that must grow from old_cap to hold new_len. */
size_t tpl_go_append_cap(size_t old_cap, size_t new_len, size_t esize, bool noscan);
