/* Label selectors as the API server parses them (labelSelector= of a list or watch): checked before
 * they are sent, so that a bad one is refused at start with what and where, not by every list.
 * Grammar: requirements joined by ','; each `key`, `!key`, `key=v`, `key==v`, `key!=v`,
 * `key in (v1,v2)`, `key notin (v1,v2)` (an empty list too, as the API server takes it), `key>N` or `key<N`. Keys are qualified names
 * ([prefix/]name), values label values (at most 63 characters). Bounded: at most
 * KUBE_SELECTOR_MAX bytes; linear in the length. */
#pragma once
#include "base/buf.h"

#define KUBE_SELECTOR_MAX 4096

/* 0 when s is a valid label selector ("" selects everything); -22 with err saying what is wrong
 * and at which character (1-based), e.g. `at character 12: "in" needs a list of values in
 * parentheses`. */
int kube_label_selector_check(const char *s, buf_t *err);
