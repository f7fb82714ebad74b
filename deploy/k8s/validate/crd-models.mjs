// Strict schemas of the prometheus-operator CRDs the manifests use
// (monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule), written in the
// same attribute-type-map form as @kubernetes/client-node's generated models
// so validate.mjs walks them identically. They cover the fields we use plus
// the common ones, with types from the operator's CRDs (v0.7x); a field not
// listed here is rejected like an unknown Kubernetes field. Types name either
// a model below or one of client-node (V1ObjectMeta, V1LabelSelector, ...).

const field = (baseName, type, format = '') => ({ name: baseName, baseName, type, format });

const TYPE_META = [field('apiVersion', 'string'), field('kind', 'string')];

export const CRD_MODELS = {
  MonitoringCoreosComV1ServiceMonitor: [
    ...TYPE_META,
    field('metadata', 'V1ObjectMeta'),
    field('spec', 'MonitoringCoreosComV1ServiceMonitorSpec'),
  ],
  MonitoringCoreosComV1ServiceMonitorSpec: [
    field('selector', 'V1LabelSelector'),
    field('namespaceSelector', 'MonitoringCoreosComV1NamespaceSelector'),
    field('endpoints', 'Array<MonitoringCoreosComV1Endpoint>'),
    field('jobLabel', 'string'),
    field('targetLabels', 'Array<string>'),
    field('podTargetLabels', 'Array<string>'),
    field('sampleLimit', 'number', 'int64'),
    field('targetLimit', 'number', 'int64'),
    field('labelLimit', 'number', 'int64'),
    field('attachMetadata', 'MonitoringCoreosComV1AttachMetadata'),
  ],
  MonitoringCoreosComV1NamespaceSelector: [
    field('any', 'boolean'),
    field('matchNames', 'Array<string>'),
  ],
  MonitoringCoreosComV1AttachMetadata: [field('node', 'boolean')],
  MonitoringCoreosComV1Endpoint: [
    field('port', 'string'),
    field('targetPort', 'IntOrString', 'int-or-string'),
    field('path', 'string'),
    field('scheme', 'string'),
    field('params', '{ [key: string]: Array<string>; }'),
    field('interval', 'string'),
    field('scrapeTimeout', 'string'),
    field('honorLabels', 'boolean'),
    field('honorTimestamps', 'boolean'),
    field('enableHttp2', 'boolean'),
    field('followRedirects', 'boolean'),
    field('filterRunning', 'boolean'),
    field('bearerTokenFile', 'string'),
    field('tlsConfig', 'any'),
    field('basicAuth', 'any'),
    field('authorization', 'any'),
    field('oauth2', 'any'),
    field('proxyUrl', 'string'),
    field('relabelings', 'Array<MonitoringCoreosComV1RelabelConfig>'),
    field('metricRelabelings', 'Array<MonitoringCoreosComV1RelabelConfig>'),
  ],
  MonitoringCoreosComV1RelabelConfig: [
    field('action', 'string'),
    field('sourceLabels', 'Array<string>'),
    field('separator', 'string'),
    field('targetLabel', 'string'),
    field('regex', 'string'),
    field('modulus', 'number', 'int64'),
    field('replacement', 'string'),
  ],

  MonitoringCoreosComV1PrometheusRule: [
    ...TYPE_META,
    field('metadata', 'V1ObjectMeta'),
    field('spec', 'MonitoringCoreosComV1PrometheusRuleSpec'),
  ],
  MonitoringCoreosComV1PrometheusRuleSpec: [
    field('groups', 'Array<MonitoringCoreosComV1RuleGroup>'),
  ],
  MonitoringCoreosComV1RuleGroup: [
    field('name', 'string'),
    field('interval', 'string'),
    field('query_offset', 'string'),
    field('limit', 'number', 'int32'),
    field('partial_response_strategy', 'string'),
    field('labels', '{ [key: string]: string; }'),
    field('rules', 'Array<MonitoringCoreosComV1Rule>'),
  ],
  MonitoringCoreosComV1Rule: [
    field('record', 'string'),
    field('alert', 'string'),
    field('expr', 'IntOrString', 'int-or-string'),
    field('for', 'string'),
    field('keep_firing_for', 'string'),
    field('labels', '{ [key: string]: string; }'),
    field('annotations', '{ [key: string]: string; }'),
  ],

  // kubeflow.org/v2beta1 MPIJob (mpi-operator v0.4+; RunPolicy and
  // ReplicaSpec as in kubeflow/common), the distributed trainer.
  KubeflowOrgV2beta1MPIJob: [
    ...TYPE_META,
    field('metadata', 'V1ObjectMeta'),
    field('spec', 'KubeflowOrgV2beta1MPIJobSpec'),
    field('status', 'any'),
  ],
  KubeflowOrgV2beta1MPIJobSpec: [
    field('slotsPerWorker', 'number', 'int32'),
    field('runLauncherAsWorker', 'boolean'),
    field('runPolicy', 'KubeflowOrgV2beta1RunPolicy'),
    field('mpiReplicaSpecs', 'KubeflowOrgV2beta1MPIReplicaSpecs'),
    field('sshAuthMountPath', 'string'),
    field('launcherCreationPolicy', 'string'),
    field('mpiImplementation', 'string'),
  ],
  KubeflowOrgV2beta1MPIReplicaSpecs: [
    field('Launcher', 'KubeflowOrgV2beta1ReplicaSpec'),
    field('Worker', 'KubeflowOrgV2beta1ReplicaSpec'),
  ],
  KubeflowOrgV2beta1ReplicaSpec: [
    field('replicas', 'number', 'int32'),
    field('template', 'V1PodTemplateSpec'),
    field('restartPolicy', 'string'),
  ],
  KubeflowOrgV2beta1RunPolicy: [
    field('cleanPodPolicy', 'string'),
    field('ttlSecondsAfterFinished', 'number', 'int32'),
    field('activeDeadlineSeconds', 'number', 'int64'),
    field('backoffLimit', 'number', 'int32'),
    field('schedulingPolicy', 'any'),
    field('suspend', 'boolean'),
    field('managedBy', 'string'),
  ],
};

// Fields the operator requires (the CRDs' `required` lists).
export const CRD_REQUIRED = {
  MonitoringCoreosComV1ServiceMonitorSpec: ['selector'],
  MonitoringCoreosComV1PrometheusRuleSpec: [],
  MonitoringCoreosComV1RuleGroup: ['name'],
  MonitoringCoreosComV1Rule: ['expr'],
  KubeflowOrgV2beta1MPIJobSpec: ['mpiReplicaSpecs'],
  KubeflowOrgV2beta1MPIReplicaSpecs: ['Launcher', 'Worker'],
  KubeflowOrgV2beta1ReplicaSpec: ['template'],
};
