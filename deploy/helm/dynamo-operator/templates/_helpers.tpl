{{/* Names: release "dynamo-operator" gives the object names of config/default (dynamo-operator-...). */}}
{{- define "dynamo-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "dynamo-operator.serviceAccountName" -}}
{{- printf "%s-controller-manager" (include "dynamo-operator.fullname" .) -}}
{{- end -}}

{{/* The namespace the operator manages in restricted mode. */}}
{{- define "dynamo-operator.targetNamespace" -}}
{{- .Values.namespaceRestriction.targetNamespace | default .Release.Namespace -}}
{{- end -}}

{{- define "dynamo-operator.selectorLabels" -}}
app.kubernetes.io/name: dynamo-operator
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end -}}

{{- define "dynamo-operator.labels" -}}
app.kubernetes.io/name: dynamo-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: dynamo
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "dynamo-operator.image" -}}
{{- $image := .Values.controllerManager.manager.image -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository ($image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* Container port of /metrics: kubebuilder's 8443 for HTTPS, controller-runtime's 8080 for plain HTTP. */}}
{{- define "dynamo-operator.metricsPort" -}}
{{- if .Values.metrics.secure -}}8443{{- else -}}8080{{- end -}}
{{- end -}}
{{- define "dynamo-operator.metricsPortName" -}}
{{- if .Values.metrics.secure -}}https{{- else -}}http{{- end -}}
{{- end -}}

{{/* ClusterRoles the operator may bind (dynamo.rbac.*ClusterRoleName values that are set). */}}
{{- define "dynamo-operator.bindableClusterRoles" -}}
{{- $r := .Values.dynamo.rbac -}}
{{- $names := list -}}
{{- range (list $r.plannerClusterRoleName $r.dgdrProfilingClusterRoleName $r.eppClusterRoleName) -}}
{{- if . -}}{{- $names = append $names . -}}{{- end -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{- define "dynamo-operator.validate" -}}
{{- if and (gt (int .Values.controllerManager.replicas) 1) (not .Values.controllerManager.leaderElection.enabled) -}}
{{- fail "controllerManager.replicas > 1 needs controllerManager.leaderElection.enabled: two leaders would write the same objects" -}}
{{- end -}}
{{- if not (has .Values.controllerManager.logFormat (list "json" "console")) -}}
{{- fail "controllerManager.logFormat must be json or console" -}}
{{- end -}}
{{- end -}}
