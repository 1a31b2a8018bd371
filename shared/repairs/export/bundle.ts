// The repair export bundle (03 "Repair export bundle", 00-decisions §6): an approved, validated
// repair as files a developer takes into their project — `repair.json` (the patch and its
// bindings), `REPAIR.md` (what drifted, the evidence, the change), `repair.ts` (type, guard and
// normaliser of the new shape) and `repair.overlay.yaml` (the change as an OpenAPI Overlay 1.0.0
// for the document the user registered). A pure function: the same input gives the same bytes.
// Refused with `repair_export_operation_unsupported` when the change has no exact place in the
// registered document, and with `repair_export_sensitive_content` when a file would hold anything
// shaped like a credential or an e-mail address.

import { createHash } from 'node:crypto';
import { fingerprint } from '../../fingerprint.js';
import { AppError } from '../../errors/index.js';
import { REPAIR_EXPORT_MARKER } from '../types.js';
import { guardSource, typeNameOf } from './guardSource.js';
import { checkOverlay } from './overlayCheck.js';
import { OVERLAY_VERSION, overlayYaml } from './overlayDocument.js';
import { planOverlay } from './overlayPlan.js';
import { repairMarkdown } from './repairMarkdown.js';
import { schemaSource, unsupported } from './schemaSource.js';
import { findSensitiveContent } from './sensitive.js';
import type { RepairBundle, RepairBundleFile, RepairBundleInput } from './types.js';

export type { RepairBundle, RepairBundleFile, RepairBundleInput } from './types.js';

export function buildRepairBundle(input: RepairBundleInput): RepairBundle {
  const { proposal, candidate, operation } = input;
  // The candidate must be what it says: its fingerprints are what the approval bound.
  if (fingerprint(input.baseSchema) !== candidate.baseSchemaFingerprint || fingerprint(candidate.schema) !== candidate.schemaFingerprint) {
    throw unsupported();
  }
  const source = schemaSource(input.contract, operation);
  const plan = planOverlay(input.baseSchema, candidate, source);
  if (plan.actions.length === 0) throw unsupported();
  const alsoChanged = checkOverlay(input, plan.actions);
  const typeName = typeNameOf(operation.method, operation.routeTemplate, operation.payloadLocation, operation.statusSelector);

  const files: RepairBundleFile[] = [
    file('repair.json', 'application/json', `${JSON.stringify(repairJson(input, plan.edited, alsoChanged, plan.notes), null, 2)}\n`),
    file(
      'REPAIR.md',
      'text/markdown',
      repairMarkdown(input, { typeName, editedSchemas: plan.edited, overlayNotes: plan.notes, alsoChanged }),
    ),
    file(
      'repair.ts',
      'text/typescript',
      guardSource(candidate.schema, { type: typeName }, [
        `${REPAIR_EXPORT_MARKER}: repair ${proposal.id} of ${proposal.operationKey}.`,
        `The payload as the repaired contract describes it (schema ${candidate.schemaFingerprint}).`,
        'Generated: edit the contract, not this file.',
      ]),
    ),
    file(
      'repair.overlay.yaml',
      'application/yaml',
      overlayYaml(source.document, `Repair ${proposal.id} of ${proposal.operationKey}`, plan.actions),
    ),
  ];
  for (const entry of files) {
    if (findSensitiveContent(entry.content) !== null) throw new AppError('repair_export_sensitive_content');
  }
  return {
    marker: REPAIR_EXPORT_MARKER,
    filename: `repair-${proposal.id}`,
    fingerprint: fingerprint({
      marker: REPAIR_EXPORT_MARKER,
      files: files.map(({ name, mediaType, sha256 }) => ({ name, mediaType, sha256 })),
    }),
    files,
  };
}

function file(name: string, mediaType: string, content: string): RepairBundleFile {
  return { name, mediaType, sha256: createHash('sha256').update(content, 'utf8').digest('hex'), content };
}

/** `repair.json`: the patch, the patched schema, and every fact the approval bound them to. */
function repairJson(input: RepairBundleInput, editedSchemas: string[], alsoChanged: string[], notes: string[]): Record<string, unknown> {
  const { proposal, incident, dataset, run, approval, contract, operation, candidate } = input;
  return {
    marker: REPAIR_EXPORT_MARKER,
    proposal: {
      id: proposal.id,
      incidentId: proposal.incidentId,
      connectionId: proposal.connectionId,
      mode: proposal.mode,
      operationKey: proposal.operationKey,
    },
    incident: { id: proposal.incidentId, kind: incident.kind, affectedRecords: incident.affectedRecords },
    contract: {
      contractVersionId: proposal.contractVersionId,
      format: contract.format,
      importedFrom: contract.importedFrom,
      declaredVersion: contract.declaredVersion,
      documentFingerprint: fingerprint(contract.document),
    },
    operation: { ...operation },
    dataset: { id: dataset.id, manifestHash: dataset.manifestHash, fixtureCount: dataset.fixtureCount },
    run: { ...run },
    approval: { id: approval.id, approvalFingerprint: approval.approvalFingerprint, decidedAt: approval.decidedAt },
    baseSchemaFingerprint: candidate.baseSchemaFingerprint,
    patch: candidate.patch,
    changes: candidate.changes,
    schema: candidate.schema,
    schemaFingerprint: candidate.schemaFingerprint,
    overlay: { file: 'repair.overlay.yaml', version: OVERLAY_VERSION, editedSchemas, alsoChangedOperations: alsoChanged, notes },
  };
}
