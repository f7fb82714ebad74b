// Strict offline validation of Kubernetes manifests against the API schemas
// carried by npm's @kubernetes/client-node generated models.
//
//   node validate.mjs --install_dir=DIR FILE.yaml...
//
// DIR holds node_modules (from `npm ci` of this folder's package-lock.json).
// Every YAML document must be a known apiVersion/kind (KIND_MODELS); the
// object is walked recursively with each model class's attribute type map and
// every unknown field name and every wrong type is reported as
//   FILE: Kind/name: path.to.field: problem
// Exit status 0 when every object is valid, 1 otherwise (2: usage/setup).
// Model files are imported one by one from dist/gen/models/ (the package's
// top-level module needs a newer Node than Debian's).

import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CRD_MODELS, CRD_REQUIRED } from './crd-models.mjs';

// apiVersion/kind -> model class name. Anything else is rejected: a kind the
// validator cannot check must not pass silently.
const KIND_MODELS = {
  'v1/ConfigMap': 'V1ConfigMap',
  'v1/Namespace': 'V1Namespace',
  'v1/PersistentVolumeClaim': 'V1PersistentVolumeClaim',
  'v1/Secret': 'V1Secret',
  'v1/Service': 'V1Service',
  'v1/ServiceAccount': 'V1ServiceAccount',
  'apps/v1/DaemonSet': 'V1DaemonSet',
  'apps/v1/Deployment': 'V1Deployment',
  'apps/v1/StatefulSet': 'V1StatefulSet',
  'autoscaling/v2/HorizontalPodAutoscaler': 'V2HorizontalPodAutoscaler',
  'batch/v1/CronJob': 'V1CronJob',
  'batch/v1/Job': 'V1Job',
  'networking.k8s.io/v1/Ingress': 'V1Ingress',
  'networking.k8s.io/v1/NetworkPolicy': 'V1NetworkPolicy',
  'policy/v1/PodDisruptionBudget': 'V1PodDisruptionBudget',
  'rbac.authorization.k8s.io/v1/Role': 'V1Role',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'V1RoleBinding',
  'monitoring.coreos.com/v1/PrometheusRule': 'MonitoringCoreosComV1PrometheusRule',
  'monitoring.coreos.com/v1/ServiceMonitor': 'MonitoringCoreosComV1ServiceMonitor',
  'kubeflow.org/v2beta1/MPIJob': 'KubeflowOrgV2beta1MPIJob',
};

// resource.Quantity fields: the generated models type them as strings, but
// the API accepts a string in Quantity syntax or a number.
const QUANTITY_FIELDS = new Set([
  'V1ResourceRequirements.limits', 'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits', 'V1VolumeResourceRequirements.requests',
  'V1EmptyDirVolumeSource.sizeLimit', 'V2MetricTarget.averageValue', 'V2MetricTarget.value',
  'V1PodSpec.overhead', 'V1ResourceQuotaSpec.hard', 'V1PersistentVolumeSpec.capacity',
  'V1LimitRangeItem.default', 'V1LimitRangeItem.defaultRequest', 'V1LimitRangeItem.max',
  'V1LimitRangeItem.min', 'V1LimitRangeItem.maxLimitRequestRatio',
]);
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(\d+(\.\d*)?|\.\d+)))?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseArgs(argv) {
  const args = { installDir: null, files: [] };
  for (const arg of argv) {
    if (arg.startsWith('--install_dir=')) args.installDir = arg.slice('--install_dir='.length);
    else if (arg.startsWith('--')) throw new Error(`unknown flag ${arg}`);
    else args.files.push(arg);
  }
  if (!args.installDir || args.files.length === 0) {
    throw new Error('usage: node validate.mjs --install_dir=DIR FILE.yaml...');
  }
  return args;
}

class Models {
  constructor(installDir) {
    this.dir = join(installDir, 'node_modules', '@kubernetes', 'client-node', 'dist', 'gen', 'models');
    if (!existsSync(this.dir)) throw new Error(`${this.dir} missing: run npm ci in ${installDir}`);
    this.cache = new Map();
  }

  // The attribute type map of a model: [{baseName, type, format}].
  async attributes(name) {
    if (this.cache.has(name)) return this.cache.get(name);
    let attributes;
    if (CRD_MODELS[name]) {
      attributes = CRD_MODELS[name];
    } else {
      const file = join(this.dir, `${name}.js`);
      if (!existsSync(file)) throw new Error(`no model ${name} in ${this.dir}`);
      const module = await import(pathToFileURL(file).href);
      const modelClass = module[name];
      if (!modelClass || typeof modelClass.getAttributeTypeMap !== 'function') {
        throw new Error(`${file} does not export class ${name} with getAttributeTypeMap()`);
      }
      attributes = modelClass.getAttributeTypeMap();
    }
    this.cache.set(name, attributes);
    return attributes;
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function closest(name, candidates) {
  const distance = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const current = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = current;
      }
    }
    return row[b.length];
  };
  let best = null;
  for (const candidate of candidates) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d <= 3 && (!best || d < best.d)) best = { candidate, d };
  }
  return best ? ` (did you mean "${best.candidate}"?)` : '';
}

class Validator {
  constructor(models) {
    this.models = models;
  }

  // Appends "path: problem" strings to errors.
  async check(value, type, format, path, errors, quantity = false) {
    if (value === null || value === undefined) return; // null = unset, as the API server reads it
    const fail = (expected) =>
      errors.push(`${path}: expected ${expected}, got ${describe(value)} ${JSON.stringify(value)}`);
    let match;
    if (quantity && (type === 'string')) {
      if (typeof value === 'number') return;
      if (typeof value !== 'string' || !QUANTITY.test(value)) fail('a quantity (e.g. 500m, 1Gi, 2)');
      return;
    }
    if ((match = /^Array<(.+)>$/.exec(type))) {
      if (!Array.isArray(value)) return fail(`array of ${match[1]}`);
      for (let i = 0; i < value.length; i++) {
        await this.check(value[i], match[1], '', `${path}[${i}]`, errors, quantity);
      }
      return;
    }
    if ((match = /^\{ \[key: string\]: (.+); \}$/.exec(type))) {
      if (describe(value) !== 'object') return fail(`map of ${match[1]}`);
      for (const [key, item] of Object.entries(value)) {
        await this.check(item, match[1], '', `${path}.${key}`, errors, quantity);
      }
      return;
    }
    switch (type) {
      case 'any':
        return;
      case 'string':
        if (typeof value !== 'string') return fail('string');
        if (format === 'byte' && !BASE64.test(value.replace(/\s/g, ''))) return fail('base64 string');
        if ((format === 'date-time' || format === 'date-time-micro') && !DATE_TIME.test(value)) {
          return fail('RFC 3339 date-time string');
        }
        return;
      case 'Date':
        if (typeof value !== 'string' || !DATE_TIME.test(value)) fail('RFC 3339 date-time string');
        return;
      case 'boolean':
        if (typeof value !== 'boolean') fail('boolean');
        return;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) return fail(`number${format ? ` (${format})` : ''}`);
        if ((format === 'int32' || format === 'int64') && !Number.isInteger(value)) return fail(`integer (${format})`);
        if (format === 'int32' && (value < -(2 ** 31) || value >= 2 ** 31)) return fail('int32');
        return;
      case 'IntOrString':
        if (typeof value === 'string') return;
        if (typeof value !== 'number' || !Number.isInteger(value)) fail('integer or string');
        return;
      default:
        return this.checkObject(value, type, path, errors);
    }
  }

  async checkObject(value, modelName, path, errors) {
    if (describe(value) !== 'object') {
      errors.push(`${path}: expected object ${modelName}, got ${describe(value)} ${JSON.stringify(value)}`);
      return;
    }
    const attributes = await this.models.attributes(modelName);
    const byName = new Map(attributes.map((a) => [a.baseName, a]));
    for (const [key, item] of Object.entries(value)) {
      const attribute = byName.get(key);
      const fieldPath = path ? `${path}.${key}` : key;
      if (!attribute) {
        errors.push(`${fieldPath}: unknown field "${key}" in ${modelName}${closest(key, byName.keys())}`);
        continue;
      }
      await this.check(item, attribute.type, attribute.format, fieldPath, errors,
        QUANTITY_FIELDS.has(`${modelName}.${key}`));
    }
    for (const required of CRD_REQUIRED[modelName] || []) {
      if (value[required] === undefined || value[required] === null) {
        errors.push(`${path ? `${path}.` : ''}${required}: required field missing in ${modelName}`);
      }
    }
  }

  // Errors of one top-level object, each prefixed with "Kind/name: ".
  async validateObject(object) {
    if (describe(object) !== 'object') return [`document: expected a Kubernetes object, got ${describe(object)}`];
    const { apiVersion, kind } = object;
    const name = object.metadata && typeof object.metadata.name === 'string' ? object.metadata.name : '<no name>';
    const label = `${kind || '<no kind>'}/${name}`;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      return [`${label}: apiVersion and kind must be strings`];
    }
    const modelName = KIND_MODELS[`${apiVersion}/${kind}`];
    if (!modelName) return [`${label}: unsupported apiVersion/kind ${apiVersion}/${kind}`];
    const errors = [];
    if (name === '<no name>') errors.push('metadata.name: required');
    await this.checkObject(object, modelName, '', errors);
    return errors.map((e) => `${label}: ${e}`);
  }
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(error.message);
    return 2;
  }
  const require = createRequire(join(args.installDir, 'package.json'));
  const yaml = require('js-yaml');
  const validator = new Validator(new Models(args.installDir));
  let failures = 0;
  let objects = 0;
  for (const file of args.files) {
    let documents;
    try {
      // YAML 1.2 core schema: no timestamps, so date-time fields stay strings.
      documents = yaml.loadAll(readFileSync(file, 'utf8'), null, { schema: yaml.CORE_SCHEMA });
    } catch (error) {
      console.log(`${file}: YAML error: ${error.message}`);
      failures++;
      continue;
    }
    for (const document of documents) {
      if (document === null || document === undefined) continue;
      objects++;
      const errors = await validator.validateObject(document);
      for (const error of errors) console.log(`${file}: ${error}`);
      failures += errors.length;
    }
  }
  if (failures > 0) {
    console.log(`FAIL: ${failures} problem(s) in ${objects} object(s)`);
    return 1;
  }
  console.log(`OK: ${objects} object(s) valid`);
  return 0;
}

process.exitCode = await main().catch((error) => {
  console.error(`validate.mjs: ${error.stack || error}`);
  return 2;
});
