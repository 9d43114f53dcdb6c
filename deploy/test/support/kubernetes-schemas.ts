import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import ts from 'typescript';
import type { KubeObject } from './kustomize';

type ModelClass = new (data: never) => { validate(): void };

/** The API groups Herald's manifests use, each with its models; an object of any other group is refused. */
const MODELS_BY_API_VERSION: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'batch/v1': batchV1,
  'policy/v1': policyV1,
  'autoscaling/v2': autoscalingV2,
  'networking.k8s.io/v1': networkingV1,
  'monitoring.coreos.com/v1': monitoringV1,
};

/** Where the model of an apiVersion lives: kubernetes-models for Kubernetes' own groups, a CRD package for the rest. */
function modelModule(apiVersion: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/**
 * Validates an object against the Kubernetes API's schema for its apiVersion and kind (the
 * models kubernetes-models generates from the API's OpenAPI document): required fields, types,
 * enums and formats. Returns the problems, empty when there are none; an unknown kind is one.
 */
export function schemaProblems(object: KubeObject): string[] {
  const Model = MODELS_BY_API_VERSION[object.apiVersion]?.[object.kind] as ModelClass | undefined;
  if (!Model) return [`no schema for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object as never).validate();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

/**
 * Fields the API does not know. The schemas above accept extra properties (the API server drops
 * or, with kubectl's strict field validation, refuses them), so a misspelt
 * `readOnlyRootFilesytem` would pass them silently. TypeScript's excess-property check on the
 * same models' interfaces catches it: each object becomes a typed object literal, compiled
 * without emitting. Returns the compiler's messages, each naming the object.
 */
export function unknownFieldProblems(objects: KubeObject[]): string[] {
  const folder = mkdtempSync(path.join(tmpdir(), 'herald-deploy-types-'));
  try {
    const lines = objects.map((object, index) => {
      const types = require.resolve(`${modelModule(object.apiVersion)}/${object.kind}`).replace(/\.js$/, '');
      return `export const object${index}: import(${JSON.stringify(types)}).I${object.kind} = ${JSON.stringify(object)};`;
    });
    const file = path.join(folder, 'objects.ts');
    writeFileSync(file, lines.join('\n') + '\n');
    const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: [], target: ts.ScriptTarget.ES2022 });
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const line =
        diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
      const object = objects[line];
      const where = object ? `${object.kind} ${object.metadata.name}` : 'objects.ts';
      return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
