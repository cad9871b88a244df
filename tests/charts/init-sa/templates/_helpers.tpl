{{- define "initsa.labels" -}}
app.kubernetes.io/name: initsa
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
