/* Internal helpers shared by the Sprig/Helm function files (sprig_*.c). */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "helm/template/tpl_internal.h"

/* Declares a function implementation with the tpl_fn_t signature. */
#define SPRIG_FN(name) static int name(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out)

/* Result helpers: copy into the call's arena. TPL_ENOMEM on failure. */
int sprig__ret_str(tpl_call_t *c, const char *p, size_t n, tpl_value_t *out);
int sprig__ret_buf(tpl_call_t *c, buf_t *b, tpl_value_t *out); /* frees b */

/* Unwraps an argument: INVALID becomes NIL (an interface{} holding nil). */
static inline tpl_value_t sprig__arg(const tpl_value_t *v) {
  tpl_value_t r = *v;
  if (r.kind == TPL_INVALID) r.kind = TPL_NIL;
  r.iface = 0;
  return r;
}

/* Sprig's strval: strings as they are, everything else as fmt's %v. */
int sprig__strval(buf_t *out, const tpl_value_t *v);
/* A []byte (tpl_value_is_bytes) as encoding/json writes it: a quoted standard base64 string. */
int sprig__bytes_b64(const tpl_value_t *v, buf_t *out);
/* Whether toJson/toYaml hand the second half of list l to a helper thread: 256+ lists or maps, or
 * 8192+ scalars (fewer are not worth a job). */
static inline bool sprig__split_worth(const tpl_list_t *l) {
  if (l->len < 256) return false;
  tpl_kind_t k0 = (tpl_kind_t)l->items[0].kind;
  return k0 == TPL_MAP || k0 == TPL_LIST || l->len >= 8192;
}
/* cast.ToInt64E / ToFloat64E (v1.7.0): 0 on success, -1 when not convertible. */
int sprig__to_int64(const tpl_value_t *v, int64_t *out);
int sprig__to_float64(const tpl_value_t *v, double *out);
/* Go's int64(f) on amd64 (NaN and out of range give INT64_MIN). */
int64_t sprig__f2i(double f);
/* strconv.ParseInt(s, base, 64) / ParseUint: 0 ok, -1 syntax, -2 range. base 0 honours prefixes and '_'. */
int sprig__parse_int(const char *s, size_t n, int base, int64_t *out);
int sprig__parse_uint(const char *s, size_t n, int base, uint64_t *out);
/* strconv.ParseFloat(s, 64): 0 ok, -1 syntax, -2 range (*out is then +-Inf or 0). */
int sprig__parse_float(const char *s, size_t n, double *out);

/* Sprig's empty(): Go's zero-ness of the dynamic value. */
bool sprig__empty(const tpl_value_t *v);
/* reflect.DeepEqual of two interface{} values. */
bool sprig__deep_equal(const tpl_value_t *a, const tpl_value_t *b);
/* Go's reflect Kind name of an interface{} value ("invalid" for nil). */
const char *sprig__kind_name(const tpl_value_t *v);
/* A list element or map value as an interface{} holds it (typed elements get their kind). */
tpl_value_t sprig__elem(const tpl_value_t *container, const tpl_value_t *item);
/* Deep copy (copystructure semantics for the value kinds templates see). */
int sprig__deep_copy(tpl_arena_t *a, const tpl_value_t *in, tpl_value_t *out);

/* How encoding/json marshals a Sprig host object (*semver.Version, time.Time,
 * time.Duration): appends the text to out and sets *number (a JSON number) or
 * clears it (a JSON string's content). False when v is no such object. */
bool sprig__object_marshal(const tpl_value_t *v, buf_t *out, bool *number);

/* yaml.v3 Encoder with SetIndent(2) (Helm's toYamlPretty), without the final newline trimmed. */
int sprig_yaml_encode_v3(buf_t *out, const tpl_value_t *v, buf_t *err);
/* The encoders with a bound on their output (0: none) and, with call, the execution's budget
 * looked at every few thousand nodes (tpl_call_check): TPL_ELIMIT once either is passed. */
int sprig__yaml_encode_max(buf_t *out, const tpl_value_t *v, buf_t *err, struct worker_s *helper, size_t max,
                           tpl_call_t *call);
int sprig__yaml_encode_v3_max(buf_t *out, const tpl_value_t *v, buf_t *err, size_t max, tpl_call_t *call);
int sprig__json_encode_max(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err,
                           struct worker_s *helper, size_t max, tpl_call_t *call);
/* The room tpl_call_room gives, as an encoder's bound (0: none). */
size_t sprig__enc_max(tpl_call_t *c);

/* A TOML datetime as BurntSushi/toml v1.6.0 decodes it (sprig_date.c): 1 (out set), 0 invalid, TPL_ENOMEM. */
int sprig__toml_datetime(tpl_call_t *c, const char *s, size_t n, tpl_value_t *out);

/* Panic with Go's nil-dereference text (reflect.TypeOf(nil).Kind()). */
#define SPRIG_NIL_DEREF "runtime error: invalid memory address or nil pointer dereference"

/* Function tables of each file. */
extern const tpl_func_t sprig__strings_fns[];
extern const size_t sprig__strings_nfns;
extern const tpl_func_t sprig__lists_fns[];
extern const size_t sprig__lists_nfns;
extern const tpl_func_t sprig__dicts_fns[];
extern const size_t sprig__dicts_nfns;
extern const tpl_func_t sprig__math_fns[];
extern const size_t sprig__math_nfns;
extern const tpl_func_t sprig__enc_fns[];
extern const size_t sprig__enc_nfns;
extern const tpl_func_t sprig__regex_fns[];
extern const size_t sprig__regex_nfns;
extern const tpl_func_t sprig__semver_fns[];
extern const size_t sprig__semver_nfns;
extern const tpl_func_t sprig__xstrings_fns[];
extern const size_t sprig__xstrings_nfns;
extern const tpl_func_t sprig__date_fns[];
extern const size_t sprig__date_nfns;
extern const tpl_func_t sprig__crypto_fns[];
extern const size_t sprig__crypto_nfns;
extern const tpl_func_t sprig__url_fns[];
extern const size_t sprig__url_nfns;
extern const tpl_func_t sprig__toml_fns[];
extern const size_t sprig__toml_nfns;
extern const tpl_func_t sprig__bcrypt_fns[];
extern const size_t sprig__bcrypt_nfns;
extern const tpl_func_t sprig__scrypt_fns[];
extern const size_t sprig__scrypt_nfns;
extern const tpl_func_t sprig__toml_dec_fns[];
extern const size_t sprig__toml_dec_nfns;
extern const tpl_func_t sprig__rand_fns[];
extern const size_t sprig__rand_nfns;
