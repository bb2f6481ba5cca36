/* YAML to cJSON, with the semantics of sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 scalars) that
 * Kubernetes tools use, and Helm's way of splitting a multi-document stream. */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>

/* Integers beyond +-2^53 become cJSON_Raw numbers holding their exact decimal text
 * (for objects sent to the API server); without it they are rounded doubles, as Helm's
 * values (float64) are. */
#define YAML_OPT_BIGINT_RAW 1
/* A repeated mapping key replaces the earlier value (as go-yaml v2 decoding into a map does for
 * Helm's fromYaml) instead of being an error. */
#define YAML_OPT_DUP_LAST 2
/* Numbers carry no text in valuestring (for trees that are only read as numbers, such as Helm
 * values): saves a formatting and an allocation per number. */
#define YAML_OPT_NO_NUMBER_TEXT 4
/* Only what Helm's util.SimpleHead reads is built: the top-level apiVersion, kind and metadata, and
 * of metadata only name and annotations (keys matched case-insensitively, as encoding/json does).
 * Everything else is parsed and checked exactly as without the flag (same errors), not built.
 * Needs YAML_OPT_DUP_LAST (ignored without it). */
#define YAML_OPT_SIMPLE_HEAD 8
/* With YAML_OPT_SIMPLE_HEAD: always through libyaml, never the scanner for plain block documents
 * (tests compare the two). */
#define YAML_OPT_NO_FAST_HEAD 16
/* Always through libyaml, never the full-tree scanner (yaml_tree_fast) that YAML_OPT_DUP_LAST
 * conversions otherwise try first (tests compare the two). */
#define YAML_OPT_NO_FAST 32

typedef struct yaml_opts_s {
  size_t max_alias_nodes; /* nodes created by expanding aliases and merges; 0: 1,000,000 */
  size_t max_depth;       /* nesting of sequences and mappings; 0: 500 */
  int flags;              /* YAML_OPT_* */
  size_t max_alias_bytes; /* bytes (nodes and their texts) the copies made by aliases hold; 0: 64 MiB */
} yaml_opts_t;

typedef struct yaml_error_s {
  int line;          /* 1-based line of the problem within the parsed text; 0 when unknown */
  int column;        /* 1-based column; 0 when unknown */
  char problem[256]; /* what is wrong, without any position */
  char context[64];  /* what the parser was in, e.g. "while parsing a block mapping"; "" when none */
  int context_line;  /* where that construct started (1-based), when context is set */
  int context_column;
  char message[512]; /* "line L, column C: problem (context that started at line L2, column C2)" */
} yaml_error_t;

typedef struct yaml_span_s {
  size_t offset; /* byte offset of the document in the split text */
  size_t len;
} yaml_span_t;

/* Converts the first YAML document of text into *out (caller deletes; an empty document is a cJSON
 * null). Mappings become objects (keys in document order; duplicate keys are an error), sequences
 * arrays; plain scalars resolve as go-yaml v2 does (null, YAML 1.1 bools such as yes/off, ints in
 * decimal/0x/0o/0b/legacy-octal with underscores, floats; timestamps stay strings); numbers also
 * carry in valuestring the text sigs.k8s.io/yaml gives a string-typed field. Anchors, aliases and
 * `<<` merges are expanded within opts' budget. 0; -EINVAL (err says line, column and problem),
 * -E2BIG (alias budget or depth exceeded) or -ENOMEM. opts and err may be NULL. */
int yaml_to_json(const char *text, size_t len, const yaml_opts_t *opts, cJSON **out, yaml_error_t *err);

/* The YAML_OPT_SIMPLE_HEAD conversion (with YAML_OPT_DUP_LAST) of a document in the subset that a
 * line scanner can read without libyaml (plain block mappings and sequences, one-line scalars,
 * literal blocks; see base/yaml.c): 1 and *out set, or 0 when the document is outside the subset
 * (yaml_to_json then uses libyaml). Never reports an error: what it accepts, libyaml accepts with
 * the same result. */
int yaml_head_fast(const char *text, size_t len, cJSON **out);

/* The conversion of text with opts' flags (YAML_OPT_DUP_LAST, optionally YAML_OPT_NO_NUMBER_TEXT)
 * and depth limit for a document in the subset that a line scanner reads without libyaml (block
 * mappings and sequences, one-line plain and quoted scalars, one-line flow collections, literal and
 * folded blocks, comments; see base/yaml.c): 1 and *out set (caller deletes), or 0 when
 * the document is outside the subset or something would fail (yaml_to_json then uses libyaml, which
 * reports any error). What it accepts, libyaml accepts with the same tree: values, key order,
 * number texts. */
int yaml_tree_fast(const char *text, size_t len, const yaml_opts_t *opts, cJSON **out);

/* From now on, on the calling thread, the plain mapping keys yaml_tree_fast makes are kept once
 * for the whole process (shared by their nodes, marked cJSON_StringIsConst, freed at exit) instead
 * of one malloc each: for one-shot commands reading big values files (`rudder template`), not for
 * the long-running controller. */
void yaml_intern_keys(void);

/* On the calling thread, yaml_tree_fast tells fn about every MiB it has read: the text before upto
 * is in the nodes and not looked at again by it (a command that mapped a big file drops those
 * pages; anything that reads the text again gets them back from the file). NULL: no calls. */
void yaml_set_consumed_hook(void (*fn)(void *ctx, const char *upto), void *ctx);

/* The JSON kind of a decoded value as encoding/json names it in its type errors ("cannot unmarshal
 * <kind> into Go struct field ..."): object, array, string, bool, number (also a cJSON_Raw
 * integer) or null. */
const char *yaml_json_kind(const cJSON *v);

/* Splits text into documents exactly as Helm's releaseutil.SplitManifests: the text is left-trimmed
 * of Unicode space, split at every match of (?m)^---[ \t]*, pieces that are only space are dropped
 * and the others left-trimmed. *spans (caller frees; NULL when none) gets their offsets into text.
 * 0 or -ENOMEM. */
int yaml_split_manifests(const char *text, size_t len, yaml_span_t **spans, size_t *nspans);

/* Reports whether the UTF-8 sequence at s (n bytes left) is a Unicode space as Go's unicode.IsSpace
 * says; *size gets its length in bytes (1 for invalid UTF-8). */
int yaml_utf8_is_space(const char *s, size_t n, size_t *size);

/* Formats v as Go's strconv.FormatFloat(v, 'g', -1, 32) into out (>= 32 bytes). */
void yaml_format_float32(double v, char *out, size_t outlen);
