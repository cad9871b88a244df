{{- define "store.labels" -}}
app.kubernetes.io/name: stateful-like
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
