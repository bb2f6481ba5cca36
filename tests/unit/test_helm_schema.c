/* helm/values/schema.c: messages of santhosh-tekuri/jsonschema v6 as Helm 4.3.1 prints them (the
 * expected texts were produced by the pinned helm), exact decimal multipleOf, draft differences,
 * and hostile schemas ($ref cycles, deep nesting, bad regexps, remote refs) refused cleanly. */
#include <stdlib.h>
#include <string.h>

#include "helm/values/schema.h"
#include "t.h"

/* Validates JSON values text against schema text; returns the message ("" when valid). */
static char *run(const char *schema, const char *values, int *rc) {
  cJSON *v = cJSON_Parse(values);
  buf_t out = BUF_INIT;
  *rc = schema_validate(schema, strlen(schema), v, &out);
  cJSON_Delete(v);
  return buf_steal(&out);
}

#define EXPECT(schema, values, want)                 \
  do {                                               \
    int _rc;                                         \
    char *_m = run(schema, values, &_rc);            \
    CHECK_EQ_STR(_m, want);                          \
    CHECK_EQ_INT(_rc, *(want) ? SCHEMA_EINVAL : 0);  \
    free(_m);                                        \
  } while (0)

static void test_messages(void) {
  EXPECT("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"a\":1.5}",
         "- at '/a': got number, want integer\n");
  EXPECT("{\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]}}}", "{\"a\":1}",
         "- at '/a': got number, want null or string\n");
  EXPECT("{\"required\":[\"x\",\"y\"]}", "{}", "- at '': missing properties 'x', 'y'\n");
  EXPECT("{\"properties\":{\"n\":{\"maximum\":65536}}}", "{\"n\":70000}", "- at '/n': maximum: got 70,000, want 65,536\n");
  EXPECT("{\"properties\":{\"n\":{\"maximum\":10}}}", "{\"n\":1e300}",
         "- at '/n': maximum: got 1\xc3\x97" "10\xc2\xb3\xe2\x81\xb0\xe2\x81\xb0, want 10\n");
  EXPECT("{\"properties\":{\"n\":{\"multipleOf\":0.1}}}", "{\"n\":0.3}", "");
  EXPECT("{\"properties\":{\"n\":{\"multipleOf\":0.1}}}", "{\"n\":0.35}", "- at '/n': multipleOf: got 0.35, want 0.1\n");
  EXPECT("{\"properties\":{\"n\":{\"multipleOf\":1e-300}}}", "{\"n\":3e300}", "");
  EXPECT("{\"properties\":{\"s\":{\"maxLength\":3}}}", "{\"s\":\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\"}",
         "- at '/s': maxLength: got 4, want 3\n");
  EXPECT("{\"properties\":{\"s\":{\"pattern\":\"^\\\\s$\"}}}", "{\"s\":\"\\u000b\"}",
         "- at '/s': '\\v' does not match pattern '^\\\\s$'\n");
  EXPECT("{\"properties\":{\"e\":{\"enum\":[\"a\",1,null]}}}", "{\"e\":\"it's\"}",
         "- at '/e': value must be one of 'a', 1, <nil>\n");
  EXPECT("{\"additionalProperties\":false,\"properties\":{\"a\":{}}}", "{\"b\":1,\"a\":1,\"c\":2}",
         "- at '': additional properties 'b', 'c' not allowed\n");
  /* several errors for one value: a group, printed nested */
  EXPECT("{\"properties\":{\"s\":{\"minLength\":5,\"pattern\":\"^[0-9]+$\"}}}", "{\"s\":\"ab\"}",
         "- at '/s': minLength: got 2, want 5\n- at '/s': 'ab' does not match pattern '^[0-9]+$'\n");
  EXPECT("{\"required\":[\"r\"],\"properties\":{\"o\":{\"required\":[\"x\"],\"properties\":{\"s\":{\"minLength\":5,"
         "\"pattern\":\"^[0-9]+$\"}}}}}",
         "{\"o\":{\"s\":\"ab\"}}",
         "- at '': missing property 'r'\n- at '/o': validation failed\n  - at '/o': missing property 'x'\n  - at '/o/s': "
         "validation failed\n    - at '/o/s': minLength: got 2, want 5\n    - at '/o/s': 'ab' does not match pattern "
         "'^[0-9]+$'\n");
  EXPECT("{\"properties\":{\"c\":{\"oneOf\":[{\"type\":\"string\"},{\"minimum\":5}]}}}", "{\"c\":2}",
         "- at '/c': 'oneOf' failed, none matched\n  - at '/c': got number, want string\n  - at '/c': minimum: got 2, "
         "want 5\n");
  EXPECT("{\"properties\":{\"c\":{\"oneOf\":[{\"type\":\"number\"},{\"minimum\":1}]}}}", "{\"c\":2}",
         "- at '/c': 'oneOf' failed, subschemas 0, 1 matched\n");
}

static void test_drafts_and_refs(void) {
  /* draft-07: siblings of $ref ignored; 2020-12: applied too */
  EXPECT("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"definitions\":{\"s\":{\"type\":\"string\"}},"
         "\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\",\"minLength\":9}}}",
         "{\"a\":\"x\"}", "");
  EXPECT("{\"$defs\":{\"s\":{\"type\":\"string\"}},\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\",\"minLength\":9}}}",
         "{\"a\":\"x\"}", "- at '/a': minLength: got 1, want 9\n");
  /* format asserted before 2019-09 only */
  EXPECT("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"properties\":{\"ip\":{\"format\":\"ipv4\"}}}",
         "{\"ip\":\"1.2.3\"}", "- at '/ip': '1.2.3' is not valid ipv4: expected four decimals\n");
  EXPECT("{\"properties\":{\"ip\":{\"format\":\"ipv4\"}}}", "{\"ip\":\"1.2.3\"}", "");
  /* draft-04 boolean exclusiveMaximum */
  EXPECT("{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"properties\":{\"n\":{\"maximum\":3,"
         "\"exclusiveMaximum\":true}}}",
         "{\"n\":3}", "- at '/n': exclusiveMaximum: got 3, want 3\n");
  /* a recursive schema over recursive values is fine */
  EXPECT("{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#/$defs/node\"}}}},"
         "\"$ref\":\"#/$defs/node\"}",
         "{\"next\":{\"next\":{\"next\":5}}}", "- at '/next/next/next': got number, want object\n");
}

static void test_hostile(void) {
  int rc;
  char *m;
  /* a $ref cycle that never moves through the value */
  m = run("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  CHECK(strstr(m, "cycle") != NULL);
  free(m);
  m = run("{\"$ref\":\"#\"}", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  free(m);
  /* Helm's urn loader: an unresolved urn: reference is permissive */
  EXPECT("{\"properties\":{\"a\":{\"$ref\":\"urn:example:x\"}}}", "{\"a\":1}", "");
  /* the library's reference-cycle error, with keyword locations (checked against helm) */
  EXPECT("{\"$defs\":{\"a\":{\"allOf\":[{\"$ref\":\"#/$defs/b\"}]},\"b\":{\"properties\":{\"x\":{\"$ref\":\"#/$defs/a\"}},"
         "\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}",
         "{\"p\":1}",
         "- at '': 'allOf' failed\n  - at '': both /$ref/allOf/0/$ref/$ref and /$ref resolve to "
         "\"file:///values.schema.json#/$defs/a\" causing reference cycle\n");
  EXPECT("{\"$ref\":\"#/nope\"}", "{}", "json-pointer in \"file:///values.schema.json#/nope\" not found");
  /* encoding/json's syntax errors */
  EXPECT("{\"a\": tru}", "{}", "invalid character '}' in literal true (expecting 'e')");
  EXPECT("[1,]", "{}", "invalid character ']' looking for beginning of value");
  EXPECT("{\"type\":", "{}", "unexpected EOF");
  EXPECT("", "{}", "EOF");
  /* another document with no loader given: Helm's text for a scheme it has no loader for */
  EXPECT("{\"$ref\":\"https://example.com/s.json\"}", "{}",
         "failing loading \"https://example.com/s.json\": no URLLoader registered for \"https://example.com/s.json\"");
  m = run("{\"$ref\":\"#/nope\"}", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  free(m);
  /* a pattern Go's regexp rejects fails the metaschema (texts from the pinned helm) */
  EXPECT("{\"properties\":{\"s\":{\"pattern\":\"(\"}}}", "{\"s\":\"x\"}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'https://json-schema.org/draft/2020-12/schema#'\n- at '': 'allOf' failed\n  - at '/properties/s': 'allOf' "
         "failed\n    - at '/properties/s/pattern': '(' is not valid regex: error parsing regexp: missing closing ): `(`");
  /* catastrophic backtracking stops at the match limit */
  m = run("{\"properties\":{\"s\":{\"pattern\":\"^(a+)+$\"}}}", "{\"s\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\"}", &rc);
  CHECK(rc == SCHEMA_EINVAL || rc == 0);
  free(m);
  m = run("{\"type\":", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  free(m);
  m = run("{} x", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  free(m);
  /* a schema nested far deeper than the depth limit */
  size_t depth = 600; /* under cJSON's nesting limit, over ours */
  char *deep = malloc(depth * 12 + 64), *p = deep;
  for (size_t i = 0; i < depth; i++) p += sprintf(p, "{\"not\":");
  p += sprintf(p, "{}");
  for (size_t i = 0; i < depth; i++) *p++ = '}';
  *p = 0;
  m = run(deep, "{}", &rc);
  CHECK(rc == SCHEMA_EINVAL);
  free(m);
  free(deep);
}

/* values.schema.json checked against its metaschema first (expected texts from the pinned helm) */
static void test_metaschema(void) {
  EXPECT("{\"type\": 5}", "{}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'https://json-schema.org/draft/2020-12/schema#'\n- at '': 'allOf' failed\n  - at '/type': 'anyOf' failed\n"
         "    - at '/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'\n"
         "    - at '/type': got number, want array");
  EXPECT("5", "{}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'https://json-schema.org/draft/2020-12/schema#'\n- at '': got number, want boolean or object");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"minLength\": -1}", "{}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'http://json-schema.org/draft-07/schema#'\n- at '/minLength': 'allOf' failed\n  - at '/minLength': minimum: "
         "got -1, want 0");
  EXPECT("{\"required\": [1, 1]}", "{}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'https://json-schema.org/draft/2020-12/schema#'\n- at '': 'allOf' failed\n  - at '/required': validation "
         "failed\n    - at '/required': items at 0 and 1 are equal\n    - at '/required/0': got number, want string\n"
         "    - at '/required/1': got number, want string");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-04/schema#\", \"exclusiveMinimum\": true, \"multipleOf\": 0}",
         "{}",
         "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with "
         "'http://json-schema.org/draft-04/schema#'\n- at '': properties 'minimum' required, if 'exclusiveMinimum' "
         "exists\n- at '/multipleOf': exclusiveMinimum: got 0, want 0");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-06/schema#\", \"properties\": {\"x\": {\"patternProperties\": "
         "{\"([\": {}}}}}",
         "{}",
         "invalid regex \"([\" at \"file:///values.schema.json#/properties/x/patternProperties\": error parsing regexp: "
         "missing closing ]: `[`");
  /* what Go's regexp accepts passes */
  EXPECT("{\"properties\":{\"s\":{\"pattern\":\"^(?P<n>a{2,3})\\\\pL[[:alpha:]]\\\\x{41}\\\\Qa*\\\\E{,3}$\"}}}", "{\"s\":\"aaa\"}",
         "- at '/s': 'aaa' does not match pattern '^(?P<n>a{2,3})\\\\pL[[:alpha:]]\\\\x{41}\\\\Qa*\\\\E{,3}$'\n");
}

/* unevaluatedProperties/Items, formats with Go's texts, enum literals (texts from the pinned helm) */
static void test_keywords(void) {
  EXPECT("{\"allOf\": [{\"properties\": {\"a\": {}}}], \"properties\": {\"b\": {}}, \"unevaluatedProperties\": "
         "{\"type\": \"string\"}}",
         "{\"a\": 1, \"b\": 2, \"c\": 3}", "- at '/c': got number, want string\n");
  EXPECT("{\"anyOf\": [{\"properties\": {\"a\": {}}}, {\"properties\": {\"b\": {}}}], \"unevaluatedProperties\": false}",
         "{\"a\": 1, \"b\": 2}", "");
  EXPECT("{\"properties\": {\"c\": {\"prefixItems\": [{}], \"unevaluatedItems\": {\"maximum\": 2}}}}",
         "{\"c\": [1, 2, 3]}", "- at '/c/2': maximum: got 3, want 2\n");
  EXPECT("{\"properties\": {\"c\": {\"contains\": {\"const\": 2}, \"prefixItems\": [{}], \"unevaluatedItems\": false}}}",
         "{\"c\": [1, 2, 3]}", "- at '/c/2': false schema\n");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"unevaluatedProperties\": false}", "{\"a\": 1}", "");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"properties\": {\"s\": {\"format\": \"ipv6\"}}}",
         "{\"s\": \"1::2::3\"}",
         "- at '/s': '1::2::3' is not valid ipv6: ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")\n");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"properties\": {\"s\": {\"format\": \"uri\"}}}",
         "{\"s\": \"http://a:b:80\"}",
         "- at '/s': 'http://a:b:80' is not valid uri: parse \"http://a:b:80\": invalid port \":b:80\" after host\n");
  EXPECT("{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"properties\": {\"s\": {\"format\": \"period\"}}}",
         "{\"s\": \"2020-13-01T00:00:00Z/P1D\"}",
         "- at '/s': '2020-13-01T00:00:00Z/P1D' is not valid period: invalid start date-time: invalid date element: "
         "parsing time \"2020-13-01\": month out of range\n");
  EXPECT("{\"properties\": {\"a\": {\"enum\": [2.50, 1e3, -0, 1E+2, \"x\"]}}}", "{\"a\": 1}",
         "- at '/a': value must be one of 2.50, 1e3, -0, 1E+2, 'x'\n");
  EXPECT("{\"properties\": {\"a\": {\"enum\": [0.10e1, 5]}}}", "{\"a\": 1}", "");
  /* repeated keys: the last one counts, as in encoding/json */
  EXPECT("{\"properties\": {\"a\": {\"type\": \"number\"}, \"a\": {\"type\": \"string\"}}}", "{\"a\": 1}",
         "- at '/a': got number, want string\n");
  /* Go's quoting of a lone backslash */
  EXPECT("{\"properties\": {\"s\": {\"const\": \"x\"}}}", "{\"s\": \"\\\\\"}", "- at '/s': value must be 'x'\n");
}

int main(void) {
  test_metaschema();
  test_keywords();
  test_messages();
  test_drafts_and_refs();
  test_hostile();
  return t_done();
}
