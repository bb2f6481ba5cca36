/* Go's regexp character sets as C tables (regex_tables.c, generated with Go
 * itself by tests/oracle/template/gentables -regex): what each named class matches,
 * as written and under (?i), and the simple case-folding orbits. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* A named class: sorted, merged [lo, hi] pairs, plain and under (?i). */
typedef struct rx_named_set_s {
  const char *name; /* a canonical property name (Greek, Lu, Letter), `\d`, or `[:alpha:]` */
  const uint32_t *plain;
  size_t nplain; /* pairs */
  const uint32_t *fold;
  size_t nfold;
} rx_named_set_t;

/* unicode.SimpleFold(r) == r + delta for every r in [lo, hi]. */
typedef struct rx_fold_s {
  uint32_t lo, hi;
  int32_t delta;
} rx_fold_t;

extern const rx_named_set_t rx_props[]; /* sorted by name (strcmp) */
extern const size_t rx_props_n;
extern const rx_named_set_t rx_groups[]; /* \d \D \s \S \w \W, [:name:], [:^name:] */
extern const size_t rx_groups_n;
extern const rx_fold_t rx_folds[];
extern const size_t rx_folds_n;
