{{- define "vw.name" -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 }}{{- end -}}
{{- define "vw.big" -}}
{{- range $i := until 200 }}{{ toJson $.Values | sha256sum | trunc 8 }}{{ end -}}
{{- end -}}
