#define _GNU_SOURCE
/* Helm's strvals (pkg/strvals/parser.go, literal_parser.go) over cJSON. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "helm/values/values.h"

#define SV_EOF 1
#define SV_ERR (-1)
#define SV_NOMEM (-2)
#define SV_NOTLIST 2
#define SV_MAX_INDEX 65536
#define SV_MAX_NESTED 30

typedef struct sv_s {
  const char *s;
  size_t n, pos;
  values_set_kind_t kind;
  values_file_reader_t reader;
  void *ud;
  char *err;
  size_t errlen;
} sv_t;

static int sv_fail(sv_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sv_fail(sv_t *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, p->errlen, fmt, ap);
  va_end(ap);
  return SV_ERR;
}

/* Go's %q for our error messages (ASCII printable kept, the rest escaped). */
static void sv_quote(buf_t *b, const char *s, size_t n) {
  buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      buf_putc(b, '\\');
      buf_putc(b, (char)c);
    } else if (c == '\n') buf_puts(b, "\\n");
    else if (c == '\t') buf_puts(b, "\\t");
    else if (c < 0x20 || c == 0x7f) buf_printf(b, "\\x%02x", c);
    else buf_putc(b, (char)c);
  }
  buf_putc(b, '"');
}

/* Reads up to a stop character (returned in *last); backslash escapes the next byte unless literal.
 * Returns 0 or SV_EOF (input ended first). */
static int sv_until(sv_t *p, const char *stop, buf_t *out, int *last) {
  buf_reset(out);
  if (buf_reserve(out, 0)) return SV_NOMEM;
  out->data[0] = 0; /* an empty key is "" */
  *last = 0;
  while (p->pos < p->n) {
    char c = p->s[p->pos++];
    if (strchr(stop, c) && c) {
      *last = c;
      return 0;
    }
    if (c == '\\' && p->kind != VALUES_SET_LITERAL) {
      if (p->pos >= p->n) return SV_EOF;
      c = p->s[p->pos++];
    }
    if (buf_putc(out, c)) return SV_NOMEM;
  }
  return SV_EOF;
}

static void sv_set(cJSON *data, const char *key, cJSON *val) {
  if (!*key) {
    cJSON_Delete(val);
    return;
  }
  if (cJSON_GetObjectItemCaseSensitive(data, key))
    cJSON_ReplaceItemInObjectCaseSensitive(data, key, val);
  else
    cJSON_AddItemToObject(data, key, val);
}

static const char *sv_go_type(const cJSON *v) {
  if (!v || cJSON_IsNull(v)) return "nil";
  if (cJSON_IsObject(v)) return "map[string]interface {}";
  if (cJSON_IsArray(v)) return "[]interface {}";
  if (cJSON_IsString(v)) return "string";
  if (cJSON_IsBool(v)) return "bool";
  if (cJSON_IsRaw(v)) return "int64";
  return "float64";
}

/* typedVal (and the string/file readers). */
static int sv_value(sv_t *p, const char *v, size_t n, cJSON **out) {
  if (p->kind == VALUES_SET_FILE) {
    char *data = NULL;
    size_t len = 0;
    if (p->reader(p->ud, v, &data, &len, p->err, p->errlen)) return SV_ERR;
    *out = cJSON_CreateString(data);
    free(data);
    return *out ? 0 : SV_NOMEM;
  }
  if (p->kind == VALUES_SET) {
    if (n == 4 && !strncasecmp(v, "true", 4)) *out = cJSON_CreateTrue();
    else if (n == 5 && !strncasecmp(v, "false", 5)) *out = cJSON_CreateFalse();
    else if (n == 4 && !strncasecmp(v, "null", 4)) *out = cJSON_CreateNull();
    else if (n == 1 && v[0] == '0') *out = cJSON_CreateRaw("0");
    else {
      *out = NULL;
      if (n && v[0] != '0') {
        /* strconv.ParseInt(v, 10, 64): optional sign, digits, no overflow. */
        size_t i = 0;
        int neg = 0;
        if (v[0] == '+' || v[0] == '-') {
          neg = v[0] == '-';
          i = 1;
        }
        if (i < n) {
          unsigned long long acc = 0;
          int ok = 1;
          for (; i < n && ok; i++) {
            if (v[i] < '0' || v[i] > '9') ok = 0;
            else {
              unsigned d = (unsigned)(v[i] - '0');
              if (acc > (9223372036854775808ULL - d) / 10) ok = 0;
              else acc = acc * 10 + d;
            }
          }
          if (ok && (neg || acc <= 9223372036854775807ULL)) {
            char t[32];
            if (neg) {
              if (acc == 9223372036854775808ULL) snprintf(t, sizeof t, "-9223372036854775808");
              else snprintf(t, sizeof t, "%lld", -(long long)acc);
            } else {
              snprintf(t, sizeof t, "%llu", acc);
            }
            *out = cJSON_CreateRaw(t);
            return *out ? 0 : SV_NOMEM;
          }
        }
      }
      char *s = strndup(v, n);
      if (!s) return SV_NOMEM;
      *out = cJSON_CreateString(s);
      free(s);
    }
    return *out ? 0 : SV_NOMEM;
  }
  char *s = strndup(v, n);
  if (!s) return SV_NOMEM;
  *out = cJSON_CreateString(s);
  free(s);
  return *out ? 0 : SV_NOMEM;
}

static int sv_key(sv_t *p, cJSON *data, int level);

static int sv_key_index(sv_t *p, int *idx) {
  buf_t b = BUF_INIT;
  int last, rc = sv_until(p, "]", &b, &last);
  if (rc) {
    buf_free(&b);
    if (rc == SV_EOF) return sv_fail(p, "error parsing index: EOF");
    return rc;
  }
  /* strconv.Atoi */
  const char *s = b.data;
  size_t i = 0, n = b.len;
  int neg = 0;
  if (n && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    i = 1;
  }
  long long v = 0;
  int ok = i < n;
  for (; i < n && ok; i++) {
    if (s[i] < '0' || s[i] > '9' || v > 1000000000000000LL) ok = 0;
    else v = v * 10 + (s[i] - '0');
  }
  if (!ok) {
    buf_t q = BUF_INIT;
    sv_quote(&q, s, n);
    sv_fail(p, "error parsing index: strconv.Atoi: parsing %s: invalid syntax", q.data ? q.data : "\"\"");
    buf_free(&q);
    buf_free(&b);
    return SV_ERR;
  }
  buf_free(&b);
  *idx = (int)(neg ? -v : v);
  return 0;
}

static int sv_set_index(sv_t *p, cJSON *list, int index, cJSON *val) {
  if (index < 0) {
    cJSON_Delete(val);
    return sv_fail(p, "negative %d index not allowed", index);
  }
  if (index > SV_MAX_INDEX) {
    cJSON_Delete(val);
    return sv_fail(p, "index of %d is greater than maximum supported index of %d", index, SV_MAX_INDEX);
  }
  while (cJSON_GetArraySize(list) <= index) {
    cJSON *nul = cJSON_CreateNull();
    if (!nul) {
      cJSON_Delete(val);
      return SV_NOMEM;
    }
    cJSON_AddItemToArray(list, nul);
  }
  cJSON_ReplaceItemInArray(list, index, val);
  return 0;
}

static int sv_empty_val(sv_t *p) {
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == ',') {
      p->pos++;
      return 1;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      p->pos++;
      continue;
    }
    return 0;
  }
  return 1;
}

/* Decodes one JSON value at the current position (json.Decoder.Decode) and skips past it. */
static int sv_json(sv_t *p, cJSON **out) {
  const char *end = NULL;
  *out = cJSON_ParseWithLengthOpts(p->s + p->pos, p->n - p->pos, &end, 0);
  if (!*out) return sv_fail(p, "invalid JSON value");
  p->pos = (size_t)(end - p->s);
  return 0;
}

/* valList: a {a,b,c} list, SV_NOTLIST, or SV_EOF. */
static int sv_val_list(sv_t *p, cJSON **out) {
  *out = NULL;
  if (p->pos >= p->n) return SV_EOF;
  if (p->s[p->pos] != '{') return SV_NOTLIST;
  p->pos++;
  cJSON *list = cJSON_CreateArray();
  if (!list) return SV_NOMEM;
  buf_t b = BUF_INIT;
  for (;;) {
    int last, rc = sv_until(p, ",}", &b, &last);
    if (rc) {
      buf_free(&b);
      cJSON_Delete(list);
      if (rc == SV_EOF) return sv_fail(p, "list must terminate with '}'");
      return rc;
    }
    cJSON *v = NULL;
    if (last == '}') {
      if (p->pos < p->n && p->s[p->pos] == ',') p->pos++;
      rc = sv_value(p, b.data, b.len, &v);
      buf_free(&b);
      if (rc) {
        cJSON_Delete(list);
        return rc;
      }
      cJSON_AddItemToArray(list, v);
      *out = list;
      return 0;
    }
    rc = sv_value(p, b.data, b.len, &v);
    if (rc) {
      buf_free(&b);
      cJSON_Delete(list);
      return rc;
    }
    cJSON_AddItemToArray(list, v);
  }
}

/* The value after '=': sets it with setter(ctx, value). Returns 0, SV_EOF or an error. */
static int sv_val(sv_t *p, buf_t *b, int *hit_eof) {
  int last, rc = sv_until(p, ",", b, &last);
  *hit_eof = rc == SV_EOF;
  return rc == SV_EOF ? 0 : rc;
}

static int sv_list_item(sv_t *p, cJSON *list, int i, int level) {
  if (i < 0) return sv_fail(p, "negative %d index not allowed", i);
  buf_t b = BUF_INIT;
  int last, rc = sv_until(p, "[.=", &b, &last);
  if (b.len > 0) {
    buf_t q = BUF_INIT;
    sv_quote(&q, b.data, b.len);
    sv_fail(p, "unexpected data at end of array index: %s", q.data);
    buf_free(&q);
    buf_free(&b);
    return SV_ERR;
  }
  buf_free(&b);
  if (rc) return rc;
  if (last == '=') {
    cJSON *v = NULL;
    if (p->kind == VALUES_SET_JSON) {
      if (sv_empty_val(p)) return sv_set_index(p, list, i, cJSON_CreateNull());
      if ((rc = sv_json(p, &v))) return rc;
      if ((rc = sv_set_index(p, list, i, v))) return rc;
      sv_empty_val(p);
      return 0;
    }
    if (p->kind == VALUES_SET_LITERAL) {
      char *s = strndup(p->s + p->pos, p->n - p->pos);
      p->pos = p->n;
      if (!s) return SV_NOMEM;
      v = cJSON_CreateString(s);
      free(s);
      return v ? sv_set_index(p, list, i, v) : SV_NOMEM;
    }
    rc = sv_val_list(p, &v);
    if (rc == 0) return sv_set_index(p, list, i, v);
    if (rc == SV_EOF) return sv_set_index(p, list, i, cJSON_CreateString(""));
    if (rc != SV_NOTLIST) return rc;
    int eof;
    buf_t vb = BUF_INIT;
    if ((rc = sv_val(p, &vb, &eof))) {
      buf_free(&vb);
      return rc;
    }
    rc = sv_value(p, vb.data ? vb.data : "", vb.len, &v);
    buf_free(&vb);
    if (rc) return rc;
    return sv_set_index(p, list, i, v);
  }
  if (last == '[') {
    int next;
    if ((rc = sv_key_index(p, &next))) return rc;
    cJSON *cur = cJSON_GetArrayItem(list, i);
    cJSON *crt;
    if (cur && !cJSON_IsNull(cur)) {
      if (!cJSON_IsArray(cur))
        return sv_fail(p, "unable to parse key: interface conversion: interface {} is %s, not []interface {}", sv_go_type(cur));
      crt = cJSON_Duplicate(cur, 1);
    } else {
      crt = cJSON_CreateArray();
    }
    if (!crt) return SV_NOMEM;
    if ((rc = sv_list_item(p, crt, next, level))) {
      cJSON_Delete(crt);
      return rc;
    }
    return sv_set_index(p, list, i, crt);
  }
  if (last == '.') {
    cJSON *cur = cJSON_GetArrayItem(list, i);
    cJSON *inner;
    if (cur && cJSON_IsObject(cur)) inner = cJSON_Duplicate(cur, 1);
    else inner = cJSON_CreateObject();
    if (!inner) return SV_NOMEM;
    if (cur && !cJSON_IsObject(cur)) {
      cJSON *empty = cJSON_CreateObject();
      if (!empty) {
        cJSON_Delete(inner);
        return SV_NOMEM;
      }
      cJSON_ReplaceItemInArray(list, i, empty);
    }
    rc = sv_key(p, inner, level);
    if (rc) {
      cJSON_Delete(inner);
      return rc;
    }
    return sv_set_index(p, list, i, inner);
  }
  return sv_fail(p, "parse error: unexpected token %d", last);
}

static int sv_key(sv_t *p, cJSON *data, int level) {
  buf_t k = BUF_INIT;
  const char *stop = p->kind == VALUES_SET_LITERAL ? "=[." : "=[,.";
  int last, rc = sv_until(p, stop, &k, &last);
  if (rc == SV_NOMEM) goto out;
  if (rc == SV_EOF) {
    if (k.len == 0) goto out;
    buf_t q = BUF_INIT;
    sv_quote(&q, k.data, k.len);
    rc = sv_fail(p, "key %s has no value", q.data);
    buf_free(&q);
    goto out;
  }
  const char *key = k.data;
  if (last == '[') {
    int i;
    if ((rc = sv_key_index(p, &i))) goto out;
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(data, key);
    cJSON *list;
    if (cur) {
      if (!cJSON_IsArray(cur)) {
        rc = sv_fail(p, "unable to parse key: interface conversion: interface {} is %s, not []interface {}", sv_go_type(cur));
        goto out;
      }
      list = cur;
    } else {
      if (!(list = cJSON_CreateArray())) {
        rc = SV_NOMEM;
        goto out;
      }
    }
    rc = sv_list_item(p, list, i, level);
    if (!cur) sv_set(data, key, list);
    goto out;
  }
  if (last == '=') {
    cJSON *v = NULL;
    if (p->kind == VALUES_SET_JSON) {
      if (sv_empty_val(p)) {
        sv_set(data, key, cJSON_CreateNull());
        rc = 0;
        goto out;
      }
      if ((rc = sv_json(p, &v))) goto out;
      sv_set(data, key, v);
      sv_empty_val(p);
      rc = 0;
      goto out;
    }
    if (p->kind == VALUES_SET_LITERAL) {
      char *s = strndup(p->s + p->pos, p->n - p->pos);
      p->pos = p->n;
      if (!s || !(v = cJSON_CreateString(s))) rc = SV_NOMEM;
      else sv_set(data, key, v), rc = 0;
      free(s);
      goto out;
    }
    rc = sv_val_list(p, &v);
    if (rc == 0) {
      sv_set(data, key, v);
      goto out;
    }
    if (rc == SV_EOF) {
      sv_set(data, key, cJSON_CreateString(""));
      goto out;
    }
    if (rc != SV_NOTLIST) goto out;
    int eof;
    buf_t vb = BUF_INIT;
    if ((rc = sv_val(p, &vb, &eof))) {
      buf_free(&vb);
      goto out;
    }
    rc = sv_value(p, vb.data ? vb.data : "", vb.len, &v);
    buf_free(&vb);
    if (rc) goto out;
    sv_set(data, key, v);
    (void)eof; /* Go's key() returns nil here even at the end; the next call sees EOF */
    rc = 0;
    goto out;
  }
  if (last == ',') {
    sv_set(data, key, cJSON_CreateString(""));
    buf_t q = BUF_INIT;
    sv_quote(&q, k.data, k.len);
    rc = sv_fail(p, "key %s has no value (cannot end with ,)", q.data);
    buf_free(&q);
    goto out;
  }
  /* '.' */
  if (++level > SV_MAX_NESTED) {
    rc = sv_fail(p, "value name nested level is greater than maximum supported nested level of %d", SV_MAX_NESTED);
    goto out;
  }
  cJSON *cur = cJSON_GetObjectItemCaseSensitive(data, key);
  cJSON *inner;
  if (cur) {
    if (!cJSON_IsObject(cur)) {
      rc = sv_fail(p, "unable to parse key: interface conversion: interface {} is %s, not map[string]interface {}", sv_go_type(cur));
      goto out;
    }
    inner = cur;
  } else if (!(inner = cJSON_CreateObject())) {
    rc = SV_NOMEM;
    goto out;
  }
  rc = sv_key(p, inner, level);
  int empty = inner->child == NULL;
  if (rc == 0 && empty) {
    buf_t q = BUF_INIT;
    sv_quote(&q, k.data, k.len);
    rc = sv_fail(p, "key map %s has no value", q.data);
    buf_free(&q);
  }
  if (!cur) {
    if (!empty) sv_set(data, key, inner);
    else cJSON_Delete(inner);
  }
out:
  buf_free(&k);
  return rc;
}

int values_parse_set(const char *s, values_set_kind_t kind, cJSON *dest, values_file_reader_t reader, void *ud,
                     char *err, size_t errlen) {
  char dummy[8];
  sv_t p = {s, strlen(s), 0, kind, reader, ud, err ? err : dummy, err ? errlen : sizeof dummy};
  for (;;) {
    int rc = sv_key(&p, dest, 0);
    if (rc == 0) continue;
    if (rc == SV_EOF) return 0;
    if (rc == SV_NOMEM) {
      snprintf(p.err, p.errlen, "out of memory");
      return VALUES_ENOMEM;
    }
    return VALUES_EINVAL;
  }
}
