/* The JSON Schema metaschemas as the library Helm pins checks a values.schema.json against them:
 * per draft, which keywords take which shape of value, grouped the way the drafts group them
 * (draft-04/06/07: one schema; 2019-09 and 2020-12: an allOf over the vocabularies, in the
 * drafts' order), so that the validator produces the same error tree. Recursion into
 * subschemas ($ref "#", $recursiveRef, $dynamicRef "#meta") always lands on the draft's root
 * here, which is where the library resolves them when checking a schema. Titles, comments and
 * defaults, which never produce errors, are left out. */
#include <stdio.h>
#include <string.h>

#include "helm/values/schema_int.h"

/* shapes, as schema text */
#define REC "{\"$ref\":\"#\"}"
#define ANY "true"
#define STR "{\"type\":\"string\"}"
#define BOOL "{\"type\":\"boolean\"}"
#define NUM "{\"type\":\"number\"}"
#define NNI "{\"$ref\":\"#/$defs/nni\"}"
#define NNI0_07 "{\"$ref\":\"#/$defs/nni0_07\"}" /* allOf [nni, {default 0}] */
#define NNI0_19 "{\"$ref\":\"#/$defs/nni0_19\"}" /* $ref nni + default 0 */
#define SCHARR "{\"$ref\":\"#/$defs/scharr\"}"
#define STRARR "{\"$ref\":\"#/$defs/strarr\"}"
#define TYPE "{\"anyOf\":[{\"$ref\":\"#/$defs/simple\"},{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/simple\"},\"minItems\":1,\"uniqueItems\":true}]}"
#define SCHMAP "{\"type\":\"object\",\"additionalProperties\":" REC "}"
#define PATPROPS "{\"type\":\"object\",\"additionalProperties\":" REC ",\"propertyNames\":{\"format\":\"regex\"}}"
#define DEPS "{\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[" REC "," STRARR "]}}"
#define ITEMS "{\"anyOf\":[" REC "," SCHARR "]}"
#define ADDL_04 "{\"anyOf\":[{\"type\":\"boolean\"}," REC "]}"
#define MULTOF "{\"type\":\"number\",\"exclusiveMinimum\":0}"
#define MULTOF_04 "{\"type\":\"number\",\"minimum\":0,\"exclusiveMinimum\":true}"
#define ENUM_04 "{\"type\":\"array\",\"minItems\":1,\"uniqueItems\":true}"
#define ENUM_07 "{\"type\":\"array\",\"items\":true,\"minItems\":1,\"uniqueItems\":true}"
#define ENUM_19 "{\"type\":\"array\",\"items\":true}"
#define URI "{\"type\":\"string\",\"format\":\"uri\"}"
#define URIREF "{\"type\":\"string\",\"format\":\"uri-reference\"}"
#define REGEX "{\"type\":\"string\",\"format\":\"regex\"}"
#define EXAMPLES "{\"type\":\"array\",\"items\":true}"
#define URI_20 "{\"$ref\":\"#/$defs/uri\"}"
#define URIREF_20 "{\"$ref\":\"#/$defs/uriref\"}"
#define ANCHOR_20 "{\"$ref\":\"#/$defs/anchor\"}"

typedef struct {
  const char *kw, *shape;
} kw_t;

#define END {NULL, NULL}

static const kw_t d04[] = {
    {"id", "{\"type\":\"string\",\"format\":\"uriref\"}"}, {"$schema", URI}, {"title", STR}, {"description", STR},
    {"default", ANY}, {"multipleOf", MULTOF_04}, {"maximum", NUM}, {"exclusiveMaximum", BOOL}, {"minimum", NUM},
    {"exclusiveMinimum", BOOL}, {"maxLength", NNI}, {"minLength", NNI0_07}, {"pattern", REGEX},
    {"additionalItems", ADDL_04}, {"items", ITEMS}, {"maxItems", NNI}, {"minItems", NNI0_07}, {"uniqueItems", BOOL},
    {"maxProperties", NNI}, {"minProperties", NNI0_07}, {"required", "{\"$ref\":\"#/$defs/strarr_04\"}"},
    {"additionalProperties", ADDL_04}, {"definitions", SCHMAP}, {"properties", SCHMAP}, {"patternProperties", SCHMAP},
    {"dependencies", "{\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[" REC ",{\"$ref\":\"#/$defs/strarr_04\"}]}}"},
    {"enum", ENUM_04}, {"type", TYPE}, {"allOf", SCHARR}, {"anyOf", SCHARR}, {"oneOf", SCHARR}, {"not", REC},
    {"format", STR}, {"$ref", STR}, END};

/* draft-06: draft-07 without $comment, readOnly, writeOnly, examples, content*, if/then/else, the
 * regex check of patternProperties names and items: true in enum */
static const kw_t d06[] = {
    {"$id", URIREF}, {"$schema", URI}, {"$ref", URIREF}, {"title", STR}, {"description", STR}, {"default", ANY},
    {"multipleOf", MULTOF}, {"maximum", NUM}, {"exclusiveMaximum", NUM}, {"minimum", NUM}, {"exclusiveMinimum", NUM},
    {"maxLength", NNI}, {"minLength", NNI0_07}, {"pattern", REGEX}, {"additionalItems", REC}, {"items", ITEMS},
    {"maxItems", NNI}, {"minItems", NNI0_07}, {"uniqueItems", BOOL}, {"contains", REC}, {"maxProperties", NNI},
    {"minProperties", NNI0_07}, {"required", STRARR}, {"additionalProperties", REC}, {"definitions", SCHMAP},
    {"properties", SCHMAP}, {"patternProperties", SCHMAP}, {"dependencies", DEPS}, {"propertyNames", REC},
    {"const", ANY}, {"enum", ENUM_04}, {"type", TYPE}, {"format", STR}, {"allOf", SCHARR}, {"anyOf", SCHARR},
    {"oneOf", SCHARR}, {"not", REC}, END};

static const kw_t d07[] = {
    {"$id", URIREF}, {"$schema", URI}, {"$ref", URIREF}, {"$comment", STR}, {"title", STR}, {"description", STR},
    {"default", ANY}, {"readOnly", BOOL}, {"writeOnly", BOOL}, {"examples", EXAMPLES}, {"multipleOf", MULTOF},
    {"maximum", NUM}, {"exclusiveMaximum", NUM}, {"minimum", NUM}, {"exclusiveMinimum", NUM}, {"maxLength", NNI},
    {"minLength", NNI0_07}, {"pattern", REGEX}, {"additionalItems", REC}, {"items", ITEMS}, {"maxItems", NNI},
    {"minItems", NNI0_07}, {"uniqueItems", BOOL}, {"contains", REC}, {"maxProperties", NNI}, {"minProperties", NNI0_07},
    {"required", STRARR}, {"additionalProperties", REC}, {"definitions", SCHMAP}, {"properties", SCHMAP},
    {"patternProperties", PATPROPS}, {"dependencies", DEPS}, {"propertyNames", REC}, {"const", ANY}, {"enum", ENUM_07},
    {"type", TYPE}, {"format", STR}, {"contentMediaType", STR}, {"contentEncoding", STR}, {"if", REC}, {"then", REC},
    {"else", REC}, {"allOf", SCHARR}, {"anyOf", SCHARR}, {"oneOf", SCHARR}, {"not", REC}, END};

/* 2019-09 vocabularies */
static const kw_t v19_core[] = {
    {"$id", "{\"type\":\"string\",\"format\":\"uri-reference\",\"pattern\":\"^[^#]*#?$\"}"}, {"$schema", URI},
    {"$anchor", "{\"type\":\"string\",\"pattern\":\"^[A-Za-z][-A-Za-z0-9.:_]*$\"}"}, {"$ref", URIREF},
    {"$recursiveRef", URIREF}, {"$recursiveAnchor", BOOL},
    {"$vocabulary", "{\"type\":\"object\",\"propertyNames\":" URI ",\"additionalProperties\":" BOOL "}"},
    {"$comment", STR}, {"$defs", SCHMAP}, END};
static const kw_t v19_applicator[] = {
    {"additionalItems", REC}, {"unevaluatedItems", REC}, {"items", ITEMS}, {"contains", REC},
    {"additionalProperties", REC}, {"unevaluatedProperties", REC}, {"properties", SCHMAP},
    {"patternProperties", PATPROPS}, {"dependentSchemas", SCHMAP}, {"propertyNames", REC}, {"if", REC},
    {"then", REC}, {"else", REC}, {"allOf", SCHARR}, {"anyOf", SCHARR}, {"oneOf", SCHARR}, {"not", REC}, END};
#define VALIDATION_19                                                                                                 \
  {"multipleOf", MULTOF}, {"maximum", NUM}, {"exclusiveMaximum", NUM}, {"minimum", NUM}, {"exclusiveMinimum", NUM}, \
      {"maxLength", NNI}, {"minLength", NNI0_19}, {"pattern", REGEX}, {"maxItems", NNI}, {"minItems", NNI0_19},     \
      {"uniqueItems", BOOL}, {"maxContains", NNI}, {"minContains", NNI}, {"maxProperties", NNI},                     \
      {"minProperties", NNI0_19}, {"required", STRARR},                                                             \
      {"dependentRequired", "{\"type\":\"object\",\"additionalProperties\":" STRARR "}"}, {"const", ANY},          \
      {"enum", ENUM_19}, {"type", TYPE}
static const kw_t v19_validation[] = {VALIDATION_19, END};
static const kw_t v19_metadata[] = {{"title", STR},     {"description", STR}, {"default", ANY},
                                    {"deprecated", BOOL}, {"readOnly", BOOL},   {"writeOnly", BOOL},
                                    {"examples", EXAMPLES}, END};
static const kw_t v19_format[] = {{"format", STR}, END};
static const kw_t v19_content[] = {{"contentMediaType", STR}, {"contentEncoding", STR}, {"contentSchema", REC}, END};
static const kw_t r19[] = {{"definitions", SCHMAP}, {"dependencies", DEPS}, END};

/* 2020-12 vocabularies */
static const kw_t v20_core[] = {
    {"$id", "{\"$ref\":\"#/$defs/uriref\",\"pattern\":\"^[^#]*#?$\"}"}, {"$schema", URI_20}, {"$ref", URIREF_20},
    {"$anchor", ANCHOR_20}, {"$dynamicRef", URIREF_20}, {"$dynamicAnchor", ANCHOR_20},
    {"$vocabulary", "{\"type\":\"object\",\"propertyNames\":" URI_20 ",\"additionalProperties\":" BOOL "}"},
    {"$comment", STR}, {"$defs", SCHMAP}, END};
static const kw_t v20_applicator[] = {
    {"prefixItems", SCHARR}, {"items", REC}, {"contains", REC}, {"additionalProperties", REC},
    {"properties", SCHMAP}, {"patternProperties", PATPROPS}, {"dependentSchemas", SCHMAP}, {"propertyNames", REC},
    {"if", REC}, {"then", REC}, {"else", REC}, {"allOf", SCHARR}, {"anyOf", SCHARR}, {"oneOf", SCHARR},
    {"not", REC}, END};
static const kw_t v20_unevaluated[] = {{"unevaluatedItems", REC}, {"unevaluatedProperties", REC}, END};
static const kw_t v20_content[] = {{"contentEncoding", STR}, {"contentMediaType", STR}, {"contentSchema", REC}, END};
static const kw_t r20[] = {{"definitions", SCHMAP}, {"dependencies", DEPS}, {"$recursiveAnchor", ANCHOR_20},
                           {"$recursiveRef", URIREF_20}, END};

/* shared definitions ($defs of the built root) */
static const kw_t defs[] = {
    {"nni", "{\"type\":\"integer\",\"minimum\":0}"},
    {"nni0_07", "{\"allOf\":[" NNI ",{\"default\":0}]}"},
    {"nni0_19", "{\"$ref\":\"#/$defs/nni\",\"default\":0}"},
    {"scharr", "{\"type\":\"array\",\"minItems\":1,\"items\":" REC "}"},
    {"strarr", "{\"type\":\"array\",\"items\":" STR ",\"uniqueItems\":true}"},
    {"strarr_04", "{\"type\":\"array\",\"items\":" STR ",\"minItems\":1,\"uniqueItems\":true}"},
    {"simple", "{\"enum\":[\"array\",\"boolean\",\"integer\",\"null\",\"number\",\"object\",\"string\"]}"},
    {"uri", URI},
    {"uriref", URIREF},
    {"anchor", "{\"type\":\"string\",\"pattern\":\"^[A-Za-z_][-A-Za-z0-9._]*$\"}"},
    END};

static bool add_props(cJSON *obj, const char *key, const kw_t *t) {
  cJSON *props = cJSON_AddObjectToObject(obj, key);
  if (!props) return false;
  for (; t->kw; t++) {
    cJSON *s = cJSON_Parse(t->shape);
    if (!s) return false;
    cJSON_AddItemToObject(props, t->kw, s);
  }
  return true;
}

static cJSON *vocab(const kw_t *t) {
  cJSON *v = cJSON_Parse("{\"type\":[\"object\",\"boolean\"]}");
  if (v && !add_props(v, "properties", t)) {
    cJSON_Delete(v);
    return NULL;
  }
  return v;
}

cJSON *schema_meta_build(int draft) {
  cJSON *root = cJSON_Parse(draft == 4 ? "{\"type\":\"object\",\"dependencies\":{\"exclusiveMaximum\":[\"maximum\"],"
                                         "\"exclusiveMinimum\":[\"minimum\"]}}"
                                       : "{\"type\":[\"object\",\"boolean\"]}");
  if (!root || !add_props(root, "$defs", defs)) goto fail;
  if (draft < 2019) {
    if (!add_props(root, "properties", draft == 4 ? d04 : draft == 6 ? d06 : d07)) goto fail;
    return root;
  }
  const kw_t *const v19[] = {v19_core, v19_metadata, v19_format, v19_content, v19_applicator, v19_validation};
  static const char *const n19[] = {"core", "meta-data", "format", "content", "applicator", "validation"};
  static const char *const o19[] = {"core", "applicator", "validation", "meta-data", "format", "content"};
  const kw_t *const v20[] = {v20_core, v19_metadata, v19_format, v20_content, v20_applicator, v19_validation,
                             v20_unevaluated};
  static const char *const n20[] = {"core",       "meta-data", "format-annotation", "content",
                                    "applicator", "validation", "unevaluated"};
  static const char *const o20[] = {"core",       "applicator", "unevaluated", "validation",
                                    "meta-data", "format-annotation", "content"};
  bool is20 = draft >= 2020;
  size_t nv = is20 ? 7 : 6;
  cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "$defs");
  for (size_t i = 0; i < nv; i++) {
    cJSON *v = vocab(is20 ? v20[i] : v19[i]);
    if (!v) goto fail;
    cJSON_AddItemToObject(d, is20 ? n20[i] : n19[i], v);
  }
  if (!add_props(root, "properties", is20 ? r20 : r19)) goto fail;
  cJSON *all = cJSON_AddArrayToObject(root, "allOf");
  if (!all) goto fail;
  for (size_t i = 0; i < nv; i++) {
    char ref[64];
    snprintf(ref, sizeof ref, "#/$defs/%s", is20 ? o20[i] : o19[i]);
    cJSON *r = cJSON_CreateObject();
    if (!r || !cJSON_AddStringToObject(r, "$ref", ref)) {
      cJSON_Delete(r);
      goto fail;
    }
    cJSON_AddItemToArray(all, r);
  }
  return root;
fail:
  cJSON_Delete(root);
  return NULL;
}

const char *schema_meta_url(int draft) {
  switch (draft) {
  case 4: return "http://json-schema.org/draft-04/schema#";
  case 6: return "http://json-schema.org/draft-06/schema#";
  case 7: return "http://json-schema.org/draft-07/schema#";
  case 2019: return "https://json-schema.org/draft/2019-09/schema#";
  default: return "https://json-schema.org/draft/2020-12/schema#";
  }
}
