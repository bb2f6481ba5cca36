{{- define "inner" }}{{ .x.y.z }}{{ end }}
