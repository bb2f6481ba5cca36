{{- define "walk" -}}{{- if kindIs "map" . -}}{{- range $k, $v := . -}}{{ $k }}({{ include "walk" $v }}){{- end -}}{{- else -}}{{ . }}{{- end -}}{{- end -}}
