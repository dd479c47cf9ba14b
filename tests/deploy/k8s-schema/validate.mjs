// Checks Kubernetes manifests without a cluster: every document against the API schema of its
// kind (kubernetes-models, generated from Kubernetes' OpenAPI), and the references between
// them: workload selectors match their pod labels, Services select a workload's pods, and every
// Secret a pod reads is among the documents.
//   node validate.mjs FILE.yaml...      exit 0 when all hold; else the faults on stderr, exit 1
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';

const faults = [];
const docs = [];
for (const file of process.argv.slice(2)) {
  for (const doc of yaml.loadAll(readFileSync(file, 'utf8'))) {
    if (doc) docs.push({ file, doc });
  }
}
if (docs.length === 0) faults.push('no documents');

for (const { file, doc } of docs) {
  const where = `${file}: ${doc.kind}/${doc.metadata?.name}`;
  let Model;
  try {
    Model = (await import(`kubernetes-models/${doc.apiVersion}/${doc.kind}`))[doc.kind];
  } catch {
    faults.push(`${where}: no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
    continue;
  }
  try {
    new Model(doc).validate();
  } catch (e) {
    faults.push(`${where}: ${e.message}`);
  }
}

const podSpecs = docs.filter(({ doc }) => doc.spec?.template?.spec);
const secrets = new Set(docs.filter(({ doc }) => doc.kind === 'Secret').map(({ doc }) => doc.metadata.name));
const matches = (selector, labels) =>
  Object.entries(selector || {}).every(([k, v]) => labels?.[k] === v);

for (const { file, doc } of podSpecs) {
  const where = `${file}: ${doc.kind}/${doc.metadata.name}`;
  if (!matches(doc.spec.selector?.matchLabels, doc.spec.template.metadata?.labels)) {
    faults.push(`${where}: spec.selector does not match the pod template's labels`);
  }
  const pod = doc.spec.template.spec;
  const used = [];
  for (const c of pod.containers || []) {
    for (const e of c.env || []) {
      if (e.valueFrom?.secretKeyRef) used.push(e.valueFrom.secretKeyRef.name);
    }
  }
  for (const v of pod.volumes || []) if (v.secret) used.push(v.secret.secretName);
  for (const name of used) {
    if (!secrets.has(name)) faults.push(`${where}: reads Secret ${name}, which no document defines`);
  }
}
for (const { file, doc } of docs.filter(({ doc }) => doc.kind === 'Service')) {
  const selected = podSpecs.some(({ doc: w }) => matches(doc.spec.selector, w.spec.template.metadata?.labels));
  if (!selected) faults.push(`${file}: Service/${doc.metadata.name} selects no workload's pods`);
}

for (const f of faults) console.error(f);
console.error(`${docs.length} documents, ${faults.length} faults`);
process.exit(faults.length === 0 ? 0 : 1);
