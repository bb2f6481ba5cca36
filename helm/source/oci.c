/* OCI references, registry paths, Helm chart manifests, tags and Bearer challenges (see oci.h). */
#include "helm/source/oci.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/b64.h"
#include "base/err.h"
#include "helm/semver/semver.h"

/* ---- references ----------------------------------------------------------------------- */

static bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* One path component: [a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)* */
static bool component_ok(const char *s, size_t n) {
  size_t i = 0;
  if (!n || !lower_alnum(s[0])) return false;
  while (i < n) {
    while (i < n && lower_alnum(s[i])) i++;
    if (i == n) return true;
    size_t j = i;
    if (s[j] == '.') j++;
    else if (s[j] == '_') j += j + 1 < n && s[j + 1] == '_' ? 2 : 1;
    else
      while (j < n && s[j] == '-') j++;
    if (j == i || j == n || !lower_alnum(s[j])) return false;
    i = j;
  }
  return true;
}

static bool repository_ok(const char *s, size_t n) {
  if (!n || n > 255) return false;
  size_t i = 0;
  while (i <= n) {
    const char *sl = memchr(s + i, '/', n - i);
    size_t e = sl ? (size_t)(sl - s) : n;
    if (!component_ok(s + i, e - i)) return false;
    if (!sl) return true;
    i = e + 1;
  }
  return false;
}

/* host[:port]: DNS labels or an IPv4 address, or [IPv6]; a numeric port. */
static bool registry_ok(const char *s, size_t n) {
  if (!n || n > 255) return false;
  size_t i = 0;
  if (s[0] == '[') {
    const char *rb = memchr(s, ']', n);
    if (!rb) return false;
    for (const char *p = s + 1; p < rb; p++)
      if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.') return false;
    i = (size_t)(rb - s) + 1;
  } else {
    bool label_start = true;
    for (; i < n && s[i] != ':'; i++) {
      char c = s[i];
      if (isalnum((unsigned char)c) || c == '_') label_start = false;
      else if (c == '-' && !label_start) continue;
      else if (c == '.' && !label_start) label_start = true;
      else return false;
    }
    if (!i || label_start) return false;
  }
  if (i == n) return true;
  if (s[i] != ':' || i + 1 == n || n - i - 1 > 5) return false;
  for (size_t k = i + 1; k < n; k++)
    if (!isdigit((unsigned char)s[k])) return false;
  return true;
}

/* [\w][\w.-]{0,127} */
static bool tag_ok(const char *s, size_t n) {
  if (!n || n > 128) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool w = isalnum((unsigned char)c) || c == '_';
    if (!w && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

/* algorithm:hex with a known algorithm and its length of lowercase hex. */
static bool digest_ok(const char *s, size_t n) {
  static const struct {
    const char *alg;
    size_t hex;
  } algs[] = {{"sha256", 64}, {"sha384", 96}, {"sha512", 128}};
  const char *colon = memchr(s, ':', n);
  if (!colon) return false;
  size_t an = (size_t)(colon - s), hn = n - an - 1;
  for (size_t k = 0; k < 3; k++)
    if (strlen(algs[k].alg) == an && !memcmp(s, algs[k].alg, an)) {
      if (hn != algs[k].hex) return false;
      for (size_t i = 0; i < hn; i++)
        if (!((colon[1 + i] >= '0' && colon[1 + i] <= '9') || (colon[1 + i] >= 'a' && colon[1 + i] <= 'f')))
          return false;
      return true;
    }
  return false;
}

void oci_ref_free(oci_ref_t *r) {
  free(r->registry), free(r->repository), free(r->tag), free(r->digest);
  memset(r, 0, sizeof *r);
}

int oci_ref_parse(const char *s, oci_ref_t *r, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  if (strncmp(s, "oci://", 6)) return base_errf(err, errlen, OCI_EINVAL, "invalid reference: %.200s does not start with oci://", s);
  s += 6;
  size_t n = strlen(s);
  if (n > 1024) return base_errf(err, errlen, OCI_EINVAL, "invalid reference: longer than 1024 bytes");
  const char *at = NULL;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '@') at = s + i;
  size_t body = at ? (size_t)(at - s) : n;
  const char *slash = memchr(s, '/', body);
  if (!slash) return base_errf(err, errlen, OCI_EINVAL, "invalid reference: missing registry or repository");
  size_t rn = (size_t)(slash - s);
  const char *path = slash + 1;
  size_t pn = body - rn - 1;
  const char *colon = memchr(path, ':', pn);
  size_t repn = colon ? (size_t)(colon - path) : pn;
  const char *tag = colon ? colon + 1 : "";
  size_t tn = colon ? pn - repn - 1 : 0;
  if (!registry_ok(s, rn)) return base_errf(err, errlen, OCI_EINVAL, "invalid reference: invalid registry \"%.*s\"", (int)(rn > 255 ? 255 : rn), s);
  if (!repository_ok(path, repn))
    return base_errf(err, errlen, OCI_EINVAL, "invalid reference: invalid repository \"%.*s\"", (int)(repn > 255 ? 255 : repn), path);
  if (!(r->registry = strndup(s, rn)) || !(r->repository = strndup(path, repn)) || !(r->tag = strndup(tag, tn)) ||
      !(r->digest = strdup(at ? at + 1 : "")))
    goto oom;
  for (char *p = r->tag; *p; p++)
    if (*p == '+') *p = '_';
  if (tn && !tag_ok(r->tag, tn) && !at) {
    int rc = base_errf(err, errlen, OCI_EINVAL, "invalid reference: invalid tag \"%.*s\"", (int)(tn > 200 ? 200 : tn), tag);
    oci_ref_free(r);
    return rc;
  }
  if (at && !digest_ok(r->digest, strlen(r->digest))) {
    int rc = base_errf(err, errlen, OCI_EINVAL, "invalid reference: invalid digest \"%.200s\"", r->digest);
    oci_ref_free(r);
    return rc;
  }
  if (at) r->tag[0] = 0; /* a tag next to a digest is dropped, as ORAS drops it */
  return 0;
oom:
  oci_ref_free(r);
  return base_errf(err, errlen, OCI_ENOMEM, "out of memory");
}

int oci_path_manifest(const oci_ref_t *r, const char *reference, buf_t *out) {
  if (!reference) reference = *r->digest ? r->digest : r->tag;
  return buf_printf(out, "/v2/%s/manifests/%s", r->repository, reference);
}

int oci_path_blob(const oci_ref_t *r, const char *digest, buf_t *out) {
  return buf_printf(out, "/v2/%s/blobs/%s", r->repository, digest);
}

static int query_escape(buf_t *out, const char *s) {
  static const char hx[] = "0123456789ABCDEF";
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    int rc;
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') rc = buf_putc(out, (char)c);
    else if (c == ' ') rc = buf_putc(out, '+');
    else rc = buf_putc(out, '%') || buf_putc(out, hx[c >> 4]) || buf_putc(out, hx[c & 15]);
    if (rc) return OCI_ENOMEM;
  }
  return 0;
}

int oci_path_tags(const oci_ref_t *r, size_t n, const char *last, buf_t *out) {
  if (buf_printf(out, "/v2/%s/tags/list", r->repository)) return OCI_ENOMEM;
  char sep = '?';
  if (n) {
    if (buf_printf(out, "?n=%zu", n)) return OCI_ENOMEM;
    sep = '&';
  }
  if (last && (buf_putc(out, sep) || buf_puts(out, "last=") || query_escape(out, last))) return OCI_ENOMEM;
  return 0;
}

int oci_link_next(const char *link, buf_t *out) {
  /* Link: <url>; rel="next"[, <url>; rel="prev"] */
  const char *p = link;
  while (p && *p) {
    const char *lt = strchr(p, '<');
    if (!lt) break;
    const char *gt = strchr(lt, '>');
    if (!gt) break;
    const char *end = strchr(gt, ',');
    const char *rel = strstr(gt, "rel=");
    if (rel && (!end || rel < end)) {
      rel += 4;
      if (*rel == '"') rel++;
      if (!strncmp(rel, "next", 4) && (rel[4] == '"' || rel[4] == ';' || rel[4] == ',' || rel[4] == ' ' || !rel[4]))
        return buf_append(out, lt + 1, (size_t)(gt - lt - 1)) ? OCI_ENOMEM : 0;
    }
    p = end ? end + 1 : NULL;
  }
  return OCI_ENOENT;
}

/* ---- manifests and tags -------------------------------------------------------------- */

static const char *json_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int parse_json(const char *json, size_t len, cJSON **out, const char *what, char *err, size_t errlen) {
  if (len > OCI_MAX_JSON) return base_errf(err, errlen, OCI_E2BIG, "%s: %zu bytes (the limit is %zu)", what, len, OCI_MAX_JSON);
  *out = cJSON_ParseWithLength(json, len);
  if (!*out) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at && at >= json && at <= json + len ? (size_t)(at - json) : 0;
    return base_errf(err, errlen, OCI_EINVAL, "%s: not valid JSON (near byte %zu)", what, off);
  }
  if (!cJSON_IsObject(*out)) {
    cJSON_Delete(*out);
    *out = NULL;
    return base_errf(err, errlen, OCI_EINVAL, "%s: not a JSON object", what);
  }
  return 0;
}

static void desc_free(oci_descriptor_t *d) {
  free(d->media_type), free(d->digest);
  memset(d, 0, sizeof *d);
}

static int desc_parse(const cJSON *o, oci_descriptor_t *d, const char *where, char *err, size_t errlen) {
  if (!cJSON_IsObject(o)) return base_errf(err, errlen, OCI_EINVAL, "manifest: %s is not an object", where);
  const char *mt = json_str(o, "mediaType"), *dg = json_str(o, "digest");
  const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "size");
  if (!mt) return base_errf(err, errlen, OCI_EINVAL, "manifest: %s has no mediaType", where);
  if (!dg || !digest_ok(dg, strlen(dg)))
    return base_errf(err, errlen, OCI_EINVAL, "manifest: %s has no valid digest (algorithm:hex)", where);
  if (!cJSON_IsNumber(sz) || sz->valuedouble < 0 || sz->valuedouble > 9007199254740992.0 ||
      sz->valuedouble != (double)(uint64_t)sz->valuedouble)
    return base_errf(err, errlen, OCI_EINVAL, "manifest: %s has no valid size", where);
  if (!(d->media_type = strdup(mt)) || !(d->digest = strdup(dg))) {
    desc_free(d);
    return base_errf(err, errlen, OCI_ENOMEM, "out of memory");
  }
  d->size = (uint64_t)sz->valuedouble;
  return 0;
}

void oci_manifest_free(oci_manifest_t *m) {
  desc_free(&m->config), desc_free(&m->chart), desc_free(&m->prov);
}

int oci_manifest_parse(const char *json, size_t len, oci_manifest_t *m, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  cJSON *root;
  int rc = parse_json(json, len, &root, "manifest", err, errlen);
  if (rc) return rc;
  const char *mt = json_str(root, "mediaType");
  const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "schemaVersion");
  const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
  if (mt && strcmp(mt, OCI_MEDIA_MANIFEST)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "manifest: media type %.100s is not an image manifest (%s)", mt, OCI_MEDIA_MANIFEST);
    goto out;
  }
  if (!cJSON_IsNumber(sv) || sv->valuedouble != 2) {
    rc = base_errf(err, errlen, OCI_EINVAL, "manifest: schemaVersion is not 2");
    goto out;
  }
  if (!cJSON_IsArray(layers)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "manifest: layers is not a list");
    goto out;
  }
  int nl = cJSON_GetArraySize(layers);
  if (nl > OCI_MAX_LAYERS) {
    rc = base_errf(err, errlen, OCI_E2BIG, "manifest: %d layers (the limit is %d)", nl, OCI_MAX_LAYERS);
    goto out;
  }
  if ((rc = desc_parse(cJSON_GetObjectItemCaseSensitive(root, "config"), &m->config, "config", err, errlen))) goto out;
  if (strcmp(m->config.media_type, OCI_MEDIA_HELM_CONFIG)) {
    rc = base_errf(err, errlen, OCI_ENOENT, "could not load config with mediatype %s", OCI_MEDIA_HELM_CONFIG);
    goto out;
  }
  int i = 0;
  const cJSON *l;
  cJSON_ArrayForEach(l, layers) {
    char where[32];
    snprintf(where, sizeof where, "layers[%d]", i++);
    oci_descriptor_t d = {0};
    if ((rc = desc_parse(l, &d, where, err, errlen))) goto out;
    bool chart = !strcmp(d.media_type, OCI_MEDIA_HELM_CHART), legacy = !strcmp(d.media_type, OCI_MEDIA_HELM_CHART_LEGACY);
    oci_descriptor_t *dst = chart || legacy ? &m->chart : !strcmp(d.media_type, OCI_MEDIA_HELM_PROV) ? &m->prov : NULL;
    if (dst) { /* the last of a type wins, as in Helm's loop */
      desc_free(dst);
      *dst = d;
      if (chart || legacy) m->legacy = legacy;
    } else desc_free(&d);
  }
  if (!m->chart.digest) {
    rc = base_errf(err, errlen, OCI_ENOENT, "manifest does not contain a layer with mediatype %s", OCI_MEDIA_HELM_CHART);
    goto out;
  }
  if (!m->prov.digest && !(m->prov.digest = strdup(""))) rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
out:
  cJSON_Delete(root);
  if (rc) oci_manifest_free(m);
  return rc;
}

void oci_tags_free(char **tags, size_t n) {
  for (size_t i = 0; i < n; i++) free(tags[i]);
  free(tags);
}

int oci_tags_parse(const char *json, size_t len, char ***tags, size_t *n, char *err, size_t errlen) {
  *tags = NULL;
  *n = 0;
  cJSON *root;
  int rc = parse_json(json, len, &root, "tags list", err, errlen);
  if (rc) return rc;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tags");
  if (!t || cJSON_IsNull(t)) goto out; /* a repository without tags */
  if (!cJSON_IsArray(t)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "tags list: tags is not a list");
    goto out;
  }
  int k = cJSON_GetArraySize(t);
  if (k > OCI_MAX_TAGS) {
    rc = base_errf(err, errlen, OCI_E2BIG, "tags list: %d tags (the limit is %d)", k, OCI_MAX_TAGS);
    goto out;
  }
  if (k && !(*tags = calloc((size_t)k, sizeof **tags))) {
    rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
    goto out;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, t) {
    if (!cJSON_IsString(e)) {
      rc = base_errf(err, errlen, OCI_EINVAL, "tags list: tags[%zu] is not a string", *n);
      goto out;
    }
    if (!((*tags)[*n] = strdup(e->valuestring))) {
      rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
      goto out;
    }
    (*n)++;
  }
out:
  cJSON_Delete(root);
  if (rc) {
    oci_tags_free(*tags, *n);
    *tags = NULL;
    *n = 0;
  }
  return rc;
}

typedef struct {
  semver_t sv;
  char *text; /* the tag with '_' read as '+' */
  size_t order;
} tagv_t;

static int tagv_cmp(const void *a, const void *b) {
  const tagv_t *x = a, *y = b;
  int d = semver_compare(&y->sv, &x->sv);
  return d ? d : x->order < y->order ? -1 : x->order > y->order;
}

int oci_tags_select(const char *const *tags, size_t n, const char *constraint, buf_t *out, char *err, size_t errlen) {
  if (!constraint) constraint = "";
  tagv_t *vs = n ? calloc(n, sizeof *vs) : NULL;
  if (n && !vs) return base_errf(err, errlen, OCI_ENOMEM, "out of memory");
  size_t k = 0;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    char *t = strdup(tags[i]);
    if (!t) {
      rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
      goto out;
    }
    for (char *p = t; *p; p++)
      if (*p == '_') *p = '+';
    if (semver_parse_strict(t, strlen(t), &vs[k].sv) == 0) {
      vs[k].text = t;
      vs[k].order = k;
      k++;
    } else free(t);
  }
  if (k > 1) qsort(vs, k, sizeof *vs, tagv_cmp);
  const char *pick = NULL;
  if (*constraint)
    for (size_t i = 0; i < k && !pick; i++)
      if (!strcmp(vs[i].text, constraint)) pick = vs[i].text;
  if (!pick) {
    const char *cs = *constraint ? constraint : "*";
    semver_constraint_t *c = NULL;
    buf_t e = BUF_INIT;
    rc = semver_constraint_new(cs, strlen(cs), &c, &e);
    if (rc) {
      rc = rc == -12 ? base_errf(err, errlen, OCI_ENOMEM, "out of memory")
                     : base_errf(err, errlen, OCI_EINVAL, "%s", e.data ? e.data : "bad constraint");
      buf_free(&e);
      goto out;
    }
    buf_free(&e);
    for (size_t i = 0; i < k && !pick; i++)
      if (semver_constraint_check(c, &vs[i].sv)) pick = vs[i].text;
    semver_constraint_free(c);
  }
  if (!pick) rc = base_errf(err, errlen, OCI_ENOENT, "could not locate a version matching provided version string %s", constraint);
  else if (buf_puts(out, pick)) rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
out:
  for (size_t i = 0; i < k; i++) free(vs[i].text);
  free(vs);
  return rc;
}

/* ---- auth ---------------------------------------------------------------------------- */

void oci_challenge_free(oci_challenge_t *c) {
  free(c->scheme), free(c->realm), free(c->service), free(c->scope);
  memset(c, 0, sizeof *c);
}

static bool tchar(char c) { return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c)); }

int oci_challenge_parse(const char *h, oci_challenge_t *c, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  if (strlen(h) > 8192) return base_errf(err, errlen, OCI_E2BIG, "WWW-Authenticate: longer than 8192 bytes");
  const char *p = h;
  while (*p == ' ' || *p == '\t') p++;
  const char *s0 = p;
  while (tchar(*p)) p++;
  if (p == s0) return base_errf(err, errlen, OCI_EINVAL, "WWW-Authenticate: no auth scheme in \"%.100s\"", h);
  buf_t val = BUF_INIT;
  int rc = 0;
  if (!(c->scheme = strndup(s0, (size_t)(p - s0)))) goto oom;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    if (!*p) break;
    const char *k0 = p;
    while (tchar(*p)) p++;
    size_t kn = (size_t)(p - k0);
    while (*p == ' ' || *p == '\t') p++;
    if (!kn || *p != '=') {
      /* a token without '=' starts the next challenge: only the first is read */
      if (kn && c->realm) break;
      rc = base_errf(err, errlen, OCI_EINVAL, "WWW-Authenticate: expected name=value at byte %zu", (size_t)(k0 - h));
      goto fail;
    }
    p++;
    while (*p == ' ' || *p == '\t') p++;
    buf_reset(&val);
    if (*p == '"') {
      p++;
      while (*p && *p != '"') {
        if (*p == '\\' && p[1]) p++;
        if (buf_putc(&val, *p++)) goto oom;
      }
      if (*p != '"') {
        rc = base_errf(err, errlen, OCI_EINVAL, "WWW-Authenticate: unterminated quoted value");
        goto fail;
      }
      p++;
    } else {
      const char *v0 = p;
      while (*p && *p != ',' && *p != ' ' && *p != '\t') p++; /* lenient: a URL unquoted */
      if (buf_append(&val, v0, (size_t)(p - v0))) goto oom;
    }
    char **dst = kn == 5 && !strncasecmp(k0, "realm", 5)     ? &c->realm
                 : kn == 7 && !strncasecmp(k0, "service", 7) ? &c->service
                 : kn == 5 && !strncasecmp(k0, "scope", 5)   ? &c->scope
                                                             : NULL;
    if (dst && !*dst && !(*dst = strdup(val.data ? val.data : ""))) goto oom;
    while (*p == ' ' || *p == '\t') p++;
    if (*p && *p != ',') {
      rc = base_errf(err, errlen, OCI_EINVAL, "WWW-Authenticate: expected ',' at byte %zu", (size_t)(p - h));
      goto fail;
    }
  }
  buf_free(&val);
  if (!c->realm && !strcasecmp(c->scheme, "Bearer")) {
    oci_challenge_free(c);
    return base_errf(err, errlen, OCI_EINVAL, "WWW-Authenticate: a Bearer challenge without realm");
  }
  if ((!c->realm && !(c->realm = strdup(""))) || (!c->service && !(c->service = strdup(""))) ||
      (!c->scope && !(c->scope = strdup(""))))
    goto oom2;
  return 0;
oom:
  buf_free(&val);
oom2:
  oci_challenge_free(c);
  return base_errf(err, errlen, OCI_ENOMEM, "out of memory");
fail:
  buf_free(&val);
  oci_challenge_free(c);
  return rc;
}

int oci_challenge_token_url(const oci_challenge_t *c, const char *scope, buf_t *out) {
  if (!scope) scope = c->scope;
  if (buf_puts(out, c->realm)) return OCI_ENOMEM;
  char sep = strchr(c->realm, '?') ? '&' : '?';
  if (*c->service) {
    if (buf_putc(out, sep) || buf_puts(out, "service=") || query_escape(out, c->service)) return OCI_ENOMEM;
    sep = '&';
  }
  if (*scope && (buf_putc(out, sep) || buf_puts(out, "scope=") || query_escape(out, scope))) return OCI_ENOMEM;
  return 0;
}

int oci_token_parse(const char *json, size_t len, buf_t *out, uint64_t *expires_in, char *err, size_t errlen) {
  cJSON *root;
  int rc = parse_json(json, len, &root, "token response", err, errlen);
  if (rc) return rc;
  const char *t = json_str(root, "access_token");
  if (!t || !*t) t = json_str(root, "token");
  const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expires_in");
  *expires_in = 60;
  if (cJSON_IsNumber(ex) && ex->valuedouble >= 1 && ex->valuedouble < 1e9) *expires_in = (uint64_t)ex->valuedouble;
  if (!t || !*t) rc = base_errf(err, errlen, OCI_EINVAL, "token response: no token or access_token");
  else if (buf_puts(out, t)) rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
  cJSON_Delete(root);
  return rc;
}

/* ---- dockerconfigjson --------------------------------------------------------------------- */

/* As parse_json, and nothing but blanks may follow the value (as encoding/json wants). */
static int parse_json_whole(const char *json, size_t len, cJSON **out, const char *what, char *err, size_t errlen) {
  *out = NULL;
  if (len > OCI_MAX_JSON) return base_errf(err, errlen, OCI_E2BIG, "%s: %zu bytes (the limit is %zu)", what, len, OCI_MAX_JSON);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at && at >= json && at <= json + len ? (size_t)(at - json) : 0;
    return base_errf(err, errlen, OCI_EINVAL, "%s: not valid JSON (near byte %zu)", what, off);
  }
  while (end && end < json + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
  if (!end || end != json + len) {
    cJSON_Delete(root);
    return base_errf(err, errlen, OCI_EINVAL, "%s: not valid JSON (data after the value at byte %zu)", what,
                     end ? (size_t)(end - json) : len);
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return base_errf(err, errlen, OCI_EINVAL, "%s: not a JSON object", what);
  }
  *out = root;
  return 0;
}

/* The key as a host: a leading http:// or https:// dropped, cut at the first '/'. */
static bool dc_key_is(const char *key, const char *registry) {
  if (!strncmp(key, "http://", 7)) key += 7;
  else if (!strncmp(key, "https://", 8)) key += 8;
  size_t n = strcspn(key, "/");
  return strlen(registry) == n && !memcmp(key, registry, n);
}

/* A string field (case-insensitive name, as encoding/json); NULL when absent or null. */
static int dc_field(const cJSON *o, const char *k, const char **out, const char *registry, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  *out = NULL;
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsString(v))
    return base_errf(err, errlen, OCI_EINVAL, "dockerconfigjson: auths entry for %.200s: %s is not a string", registry, k);
  *out = v->valuestring;
  return 0;
}

int oci_dockerconfig_creds(const char *json, size_t len, const char *registry, char **user, char **pass, char *err,
                           size_t errlen) {
  *user = *pass = NULL;
  cJSON *root;
  int rc = parse_json_whole(json, len, &root, "dockerconfigjson", err, errlen);
  if (rc) return rc;
  const char *server = !strcmp(registry, "docker.io") ? "https://index.docker.io/v1/" : registry;
  const cJSON *auths = cJSON_GetObjectItemCaseSensitive(root, "auths");
  const cJSON *entry = NULL;
  unsigned char *dec = NULL;
  size_t dn = 0;
  if (auths && !cJSON_IsNull(auths) && !cJSON_IsObject(auths)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "dockerconfigjson: auths is not an object");
    goto out;
  }
  if (auths) {
    const cJSON *e;
    cJSON_ArrayForEach(e, auths) if (e->string && !strcmp(e->string, server)) entry = e;
    if (!entry) cJSON_ArrayForEach(e, auths) if (e->string && dc_key_is(e->string, server)) {
        entry = e;
        break;
      }
  }
  if (!entry || cJSON_IsNull(entry)) {
    rc = base_errf(err, errlen, OCI_ENOENT, "dockerconfigjson: no credentials for registry %.200s", registry);
    goto out;
  }
  if (!cJSON_IsObject(entry)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "dockerconfigjson: the auths entry for %.200s is not an object", registry);
    goto out;
  }
  const char *auth, *un, *pw, *idt, *rt;
  if ((rc = dc_field(entry, "auth", &auth, registry, err, errlen)) ||
      (rc = dc_field(entry, "username", &un, registry, err, errlen)) ||
      (rc = dc_field(entry, "password", &pw, registry, err, errlen)) ||
      (rc = dc_field(entry, "identitytoken", &idt, registry, err, errlen)) ||
      (rc = dc_field(entry, "registrytoken", &rt, registry, err, errlen)))
    goto out;
  size_t un_len = un ? strlen(un) : 0, pw_len = pw ? strlen(pw) : 0;
  if (auth && *auth) {
    char e2[128];
    if (b64_decode_alloc(auth, strlen(auth), &dec, &dn, e2, sizeof e2)) {
      rc = base_errf(err, errlen, OCI_EINVAL, "dockerconfigjson: auths entry for %.200s: auth is not valid base64", registry);
      goto out;
    }
    const unsigned char *colon = memchr(dec, ':', dn);
    if (!colon) { /* never say what it decoded to: that may be a password */
      rc = base_errf(err, errlen, OCI_EINVAL,
                     "dockerconfigjson: auths entry for %.200s: auth is not base64 of username:password", registry);
      goto out;
    }
    un = (const char *)dec;
    un_len = (size_t)(colon - dec);
    pw = (const char *)colon + 1;
    pw_len = dn - un_len - 1;
  }
  if (idt && *idt) {
    un = OCI_TOKEN_USER;
    un_len = strlen(un);
    pw = idt;
    pw_len = strlen(idt);
  }
  if (!un_len && !pw_len) {
    rc = base_errf(err, errlen, OCI_ENOENT, "dockerconfigjson: the entry for registry %.200s holds no credentials", registry);
    goto out;
  }
  if (memchr(un ? un : "", 0, un_len) || memchr(pw ? pw : "", 0, pw_len)) {
    rc = base_errf(err, errlen, OCI_EINVAL, "dockerconfigjson: auths entry for %.200s: a NUL byte in the credentials", registry);
    goto out;
  }
  if (!(*user = strndup(un ? un : "", un_len)) || !(*pass = strndup(pw ? pw : "", pw_len))) {
    free(*user);
    *user = NULL;
    rc = base_errf(err, errlen, OCI_ENOMEM, "out of memory");
  }
out:
  if (dec) {
    memset(dec, 0, dn);
    free(dec);
  }
  cJSON_Delete(root);
  return rc;
}
