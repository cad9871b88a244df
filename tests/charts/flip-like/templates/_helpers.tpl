{{- define "flip-trust.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "flip-trust.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "flip-trust.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flip-trust.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "flip-trust.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "flip-trust.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "flip-trust.secretName" -}}
{{- if .Values.secrets.create }}{{ include "flip-trust.fullname" . }}-secrets{{ else }}{{ .Values.secrets.existingName }}{{ end }}
{{- end }}

{{/* A workload: Deployment with one container reading the shared Secret. Args: root, component, repository, tag, replicas, extra (container yaml), podExtra (pod spec yaml), annotations (map). */}}
{{- define "flip-trust.deployment" -}}
{{- $root := .root }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "flip-trust.fullname" $root }}-{{ .component }}
  labels:
    {{- include "flip-trust.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  replicas: {{ .replicas }}
  selector:
    matchLabels:
      {{- include "flip-trust.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
  template:
    metadata:
      labels:
        {{- include "flip-trust.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
    spec:
      enableServiceLinks: false
      {{- with .podExtra }}
      {{- . | nindent 6 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: "{{ .repository }}:{{ .tag }}"
          env:
            - name: ENVIRONMENT
              value: {{ $root.Values.environment | quote }}
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{ include "flip-trust.secretName" $root }}
                  key: db-password
          {{- with .extra }}
          {{- . | nindent 10 }}
          {{- end }}
{{- end }}
