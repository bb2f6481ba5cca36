{{- define "lib.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
  labels:
    chart: {{ .Chart.Name }}-{{ .Chart.Version }}
    team: {{ .Values.global.team | default "none" }}
spec:
  ports:
    - port: {{ .Values.port | default 80 }}
{{- end -}}
