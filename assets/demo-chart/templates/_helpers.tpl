{{/*
Chart name, used for app.kubernetes.io/name.
*/}}
{{- define "deckapp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every object name: the release name (demo -> demo-api, demo-web, ...),
unless fullnameOverride is set.
*/}}
{{- define "deckapp.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- end }}

{{/*
Name of one component's objects. Call with (dict "ctx" $ "component" "api").
*/}}
{{- define "deckapp.componentName" -}}
{{- printf "%s-%s" (include "deckapp.fullname" .ctx) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "deckapp.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Image tag shared by every component.
*/}}
{{- define "deckapp.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
Full image reference. Call with (dict "ctx" $ "repository" "deck-api").
*/}}
{{- define "deckapp.image" -}}
{{- printf "%s/%s:%s" .ctx.Values.image.registry .repository (include "deckapp.tag" .ctx) }}
{{- end }}

{{/*
Selector labels: stable for the life of the release (selectors are immutable).
Call with (dict "ctx" $ "component" "api").
*/}}
{{- define "deckapp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "deckapp.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Standard labels, on every object and every pod template.
Call with (dict "ctx" $ "component" "api").
*/}}
{{- define "deckapp.labels" -}}
helm.sh/chart: {{ include "deckapp.chart" .ctx }}
{{ include "deckapp.selectorLabels" . }}
app.kubernetes.io/version: {{ include "deckapp.tag" .ctx | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: {{ include "deckapp.name" .ctx }}
{{- end }}

{{/*
Pod-level fields shared by every pod.
*/}}
{{- define "deckapp.podCommon" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  fsGroup: 10001
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Container security context shared by every container.
*/}}
{{- define "deckapp.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
{{- end }}
