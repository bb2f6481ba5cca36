/* Chart.lock and requirements.lock: the YAML is converted as sigs.k8s.io/yaml does (keys sorted,
 * scalars into string fields become their text) and decoded field by field as encoding/json
 * decodes into chart.Lock {generated time.Time, digest string, dependencies []*Dependency},
 * with Go's error texts: the first type mismatch is kept while decoding goes on, an error from
 * time.Time's UnmarshalJSON stops it. */
#include "helm/chart/chart_lock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/yaml.h"
#include "helm/values/values.h"

typedef struct {
  buf_t saved; /* the first type mismatch */
  buf_t fatal; /* an error that stops decoding */
} lockdec_t;

static void type_err(lockdec_t *d, const cJSON *v, const char *st, const char *field, const char *gotype) {
  if (d->saved.len) return;
  buf_printf(&d->saved, "json: cannot unmarshal %s into Go struct field %s.%s of type %s", yaml_json_kind(v), st, field,
             gotype);
}

/* Go's time.quote: ASCII printable kept (with \" and \\), other bytes as \xNN. */
static void time_quote(buf_t *o, const char *s, size_t n) {
  buf_putc(o, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 || c < ' ') buf_printf(o, "\\x%02x", c);
    else {
      if (c == '"' || c == '\\') buf_putc(o, '\\');
      buf_putc(o, (char)c);
    }
  }
  buf_putc(o, '"');
}

static bool digit_at(const char *s, size_t n, size_t i) { return i < n && s[i] >= '0' && s[i] <= '9'; }

/* time.Parse(time.RFC3339, s): false with Go's ParseError text. */
static bool rfc3339_ok(const char *v, size_t vn, buf_t *o) {
  static const char layout[] = "2006-01-02T15:04:05Z07:00";
  /* the layout's elements: a literal prefix, then a number or the zone */
  static const struct {
    const char *prefix, *std;
  } el[] = {{"", "2006"}, {"-", "01"}, {"-", "02"}, {"T", "15"}, {":", "04"}, {":", "05"}, {"", "Z07:00"}};
  const char *s = v;
  size_t n = vn;
  int num[6] = {0};
  for (size_t k = 0; k < 7; k++) {
    const char *p = el[k].prefix;
    if (*p) {
      if (!n || *s != *p) {
        buf_puts(o, "parsing time ");
        time_quote(o, v, vn);
        buf_printf(o, " as \"%s\": cannot parse ", layout);
        time_quote(o, s, n);
        buf_printf(o, " as \"%s\"", p);
        return false;
      }
      s++, n--;
    }
    const char *hold = s;
    size_t holdn = n;
    bool bad = false;
    const char *range = NULL;
    if (k == 0) {
      if (n < 4 || !digit_at(s, n, 0)) bad = true;
      else {
        for (int i = 0; i < 4; i++)
          if (!digit_at(s, n, (size_t)i)) bad = true;
        if (!bad) num[0] = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
        s += 4, n -= 4;
      }
    } else if (k < 6) {
      bool fixed = k != 3; /* the hour takes one digit too */
      if (!digit_at(s, n, 0)) bad = true;
      else if (!digit_at(s, n, 1)) {
        if (fixed) bad = true;
        else num[k] = s[0] - '0', s++, n--;
      } else num[k] = (s[0] - '0') * 10 + (s[1] - '0'), s += 2, n -= 2;
      if (!bad) {
        if (k == 1 && (num[1] < 1 || num[1] > 12)) range = "month";
        if (k == 3 && num[3] >= 24) range = "hour";
        if (k == 4 && num[4] >= 60) range = "minute";
        if (k == 5 && num[5] >= 60) range = "second";
        if (k == 5 && !range && n >= 2 && (s[0] == '.' || s[0] == ',') && digit_at(s, n, 1)) {
          size_t d = 2;
          while (digit_at(s, n, d)) d++;
          s += d, n -= d;
        }
      }
    } else if (n >= 1 && s[0] == 'Z') {
      s++, n--;
    } else if (n < 6 || s[3] != ':') {
      bad = true;
    } else {
      int hr = 0, mm = 0;
      if (!digit_at(s, n, 1) || !digit_at(s, n, 2)) bad = true;
      else {
        hr = (s[1] - '0') * 10 + (s[2] - '0');
        if (!digit_at(s, n, 4) || !digit_at(s, n, 5)) bad = true;
        else mm = (s[4] - '0') * 10 + (s[5] - '0');
      }
      if (hr > 24) range = "time zone offset hour";
      if (mm > 60) range = "time zone offset minute";
      if (s[0] != '+' && s[0] != '-') bad = true;
      s += 6, n -= 6;
    }
    if (range) {
      buf_puts(o, "parsing time ");
      time_quote(o, v, vn);
      buf_printf(o, ": %s out of range", range);
      return false;
    }
    if (bad) {
      buf_puts(o, "parsing time ");
      time_quote(o, v, vn);
      buf_printf(o, " as \"%s\": cannot parse ", layout);
      time_quote(o, hold, holdn);
      buf_printf(o, " as \"%s\"", el[k].std);
      return false;
    }
  }
  if (n) {
    buf_puts(o, "parsing time ");
    time_quote(o, v, vn);
    buf_puts(o, ": extra text: ");
    time_quote(o, s, n);
    return false;
  }
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y = num[0], m = num[1];
  int dim = mdays[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
  if (num[2] < 1 || num[2] > dim) {
    buf_puts(o, "parsing time ");
    time_quote(o, v, vn);
    buf_puts(o, ": day out of range");
    return false;
  }
  return true;
}

static int cmp_child(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* An object's members in the order Go sees them (sorted keys); NULL when empty or out of memory. */
static const cJSON **sorted_members(const cJSON *o, size_t *n) {
  *n = (size_t)cJSON_GetArraySize(o);
  if (!*n) return NULL;
  const cJSON **v = malloc(*n * sizeof *v);
  if (!v) return NULL;
  size_t i = 0;
  for (const cJSON *c = o->child; c; c = c->next) v[i++] = c;
  qsort(v, *n, sizeof *v, cmp_child);
  return v;
}

static bool is_stringish(const cJSON *v) {
  return cJSON_IsNull(v) || cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsRaw(v) || cJSON_IsBool(v);
}

static void dec_dependency(lockdec_t *d, const cJSON *o) {
  size_t n;
  const cJSON **m = sorted_members(o, &n);
  for (size_t i = 0; i < n; i++) {
    const cJSON *v = m[i];
    const char *k = v->string;
    if (!strcasecmp(k, "name") || !strcasecmp(k, "version") || !strcasecmp(k, "repository") ||
        !strcasecmp(k, "condition") || !strcasecmp(k, "alias")) {
      if (!is_stringish(v)) {
        char f[64];
        snprintf(f, sizeof f, "dependencies.%s", k);
        for (char *p = f; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        type_err(d, v, "Dependency", f, "string");
      }
    } else if (!strcasecmp(k, "tags")) {
      if (cJSON_IsNull(v)) continue;
      if (!cJSON_IsArray(v)) type_err(d, v, "Dependency", "dependencies.tags", "[]string");
      else
        for (const cJSON *t = v->child; t; t = t->next)
          if (!is_stringish(t)) type_err(d, t, "Dependency", "dependencies.tags", "string");
    } else if (!strcasecmp(k, "enabled")) {
      if (!cJSON_IsNull(v) && !cJSON_IsBool(v)) type_err(d, v, "Dependency", "dependencies.enabled", "bool");
    } else if (!strcasecmp(k, "import-values")) {
      if (!cJSON_IsNull(v) && !cJSON_IsArray(v)) type_err(d, v, "Dependency", "dependencies.import-values", "[]interface {}");
    }
  }
  free(m);
}

int chart_lock_check(const char *data, size_t len, const char *what, char *err, size_t errlen) {
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST};
  yaml_error_t ye;
  cJSON *j = NULL;
  int rc = yaml_to_json(data, len, &o, &j, &ye);
  if (rc == -ENOMEM) return -12;
  if (rc) {
    char ym[400];
    values_yaml_error(&ye, ym, sizeof ym);
    snprintf(err, errlen, "cannot load %s: error converting YAML to JSON: %s", what, ym);
    return -1;
  }
  lockdec_t d = {BUF_INIT, BUF_INIT};
  if (!cJSON_IsNull(j) && !cJSON_IsObject(j)) {
    buf_printf(&d.saved, "json: cannot unmarshal %s into Go value of type v2.Lock", yaml_json_kind(j));
  } else {
    size_t n;
    const cJSON **m = cJSON_IsObject(j) ? sorted_members(j, &n) : NULL;
    for (size_t i = 0; m && i < n && !d.fatal.len; i++) {
      const cJSON *v = m[i];
      const char *k = v->string;
      if (!strcasecmp(k, "generated")) {
        if (cJSON_IsNull(v)) continue;
        if (!cJSON_IsString(v)) buf_puts(&d.fatal, "Time.UnmarshalJSON: input is not a JSON string");
        else rfc3339_ok(v->valuestring, strlen(v->valuestring), &d.fatal);
      } else if (!strcasecmp(k, "digest")) {
        if (!is_stringish(v)) type_err(&d, v, "Lock", "digest", "string");
      } else if (!strcasecmp(k, "dependencies")) {
        if (cJSON_IsNull(v)) continue;
        if (!cJSON_IsArray(v)) {
          type_err(&d, v, "Lock", "dependencies", "[]*v2.Dependency");
          continue;
        }
        for (const cJSON *e = v->child; e; e = e->next) {
          if (cJSON_IsNull(e)) continue;
          if (!cJSON_IsObject(e)) type_err(&d, e, "Lock", "dependencies", "v2.Dependency");
          else dec_dependency(&d, e);
        }
      }
    }
    free(m);
  }
  cJSON_Delete(j);
  const buf_t *e = d.fatal.len ? &d.fatal : &d.saved;
  rc = 0;
  if (e->len) {
    snprintf(err, errlen, "cannot load %s: error unmarshaling JSON: while decoding JSON: %s", what, e->data);
    rc = -1;
  }
  buf_free(&d.saved);
  buf_free(&d.fatal);
  return rc;
}
