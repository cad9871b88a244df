{{- define "widgets.labels" -}}
app.kubernetes.io/name: operator-like
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Takes (list $ COMPONENT). */}}
{{- define "widgets.selector" -}}
app.kubernetes.io/name: operator-like
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}
