/* helm/schema.c: messages of santhosh-tekuri/jsonschema v6 as Helm 4.3.1 prints them (the
 * expected texts were produced by the pinned helm), exact decimal multipleOf, draft differences,
 * and hostile schemas ($ref cycles, deep nesting, bad regexps, remote refs) refused cleanly. */
#include <stdlib.h>
#include <string.h>

#include "helm/schema.h"
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
  m = run("{\"$ref\":\"https://example.com/s.json\"}", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  CHECK(strstr(m, "cannot resolve $ref") != NULL);
  free(m);
  m = run("{\"$ref\":\"#/nope\"}", "{}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  free(m);
  m = run("{\"properties\":{\"s\":{\"pattern\":\"(\"}}}", "{\"s\":\"x\"}", &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  CHECK(strstr(m, "invalid regexp") != NULL);
  free(m);
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

int main(void) {
  test_messages();
  test_drafts_and_refs();
  test_hostile();
  return t_done();
}
