/* Sprig v3.3.0 and Helm's own template functions (toYaml, toJson, fromYaml,
 * ...) with the exact semantics of the versions Helm v4.3.1 pins: Sprig,
 * spf13/cast v1.7.0, dario.cat/mergo v1.0.1, Masterminds/semver v3,
 * sigs.k8s.io/yaml v1.6.0 (go.yaml.in/yaml/v2 v2.4.4) and Go's encoding/json.
 * See SPRIG_STATUS.md for which functions exist. */
#pragma once
#include "base/buf.h"
#include "helm/template/tpl.h"

/* Adds every implemented Sprig and Helm function to a table (not include,
 * required, fail, tpl: see helm_funcs.h). 0 or a negative error. */
int sprig_funcs_add(tpl_funcs_t *t);

/* Appends Go's json.Marshal(v) (sorted keys, \u003c escaping, ES6 floats).
 * html: escape <, >, & (json.Marshal) or not (Encoder.SetEscapeHTML(false)).
 * indent: NULL or the MarshalIndent indent string. 0, -1 with Go's error text
 * in err (e.g. "json: unsupported value: NaN"), or TPL_ENOMEM. */
int sprig_json_encode(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err);
/* sprig_json_encode that may hand half of a big list to a helper thread (base/worker.h; NULL:
 * none). The same text and errors. */
int sprig_json_encode_with(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err,
                           struct worker_s *helper);

/* Appends sigs.k8s.io/yaml.Marshal(v) (JSON, then yaml.v2's emitter: sorted
 * keys, quoting of strings that read as other types, block scalars, 80-column
 * folding), including the final newline. 0, -1 (Go's error in err) or TPL_ENOMEM. */
int sprig_yaml_encode(buf_t *out, const tpl_value_t *v, buf_t *err);
/* sprig_yaml_encode that may hand half of a big list to a helper thread (NULL: none). */
int sprig_yaml_encode_with(buf_t *out, const tpl_value_t *v, buf_t *err, struct worker_s *helper);
