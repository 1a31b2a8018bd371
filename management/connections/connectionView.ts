import type { ConnectionRecord, Mode } from './connectionStore.js';

/** 01 "Connection (single read)": no token, token hash or key material can be serialised. */
export interface ConnectionView {
  id: string;
  workspaceIntegrationId: string;
  name: string;
  provider: string;
  direction: string;
  protocol: string;
  environment: { id: string; category: string; mode: Mode };
  revision: string;
  credentialStatus: string;
  activeContractVersionId: string | null;
}

export function connectionView(connection: ConnectionRecord): ConnectionView {
  return {
    id: connection.id,
    workspaceIntegrationId: connection.integrationId,
    name: connection.name,
    provider: connection.provider,
    direction: connection.direction,
    protocol: connection.protocol,
    environment: { id: connection.environmentId, category: connection.environmentCategory, mode: connection.environmentMode },
    revision: connection.revision,
    credentialStatus: connection.credentialStatus,
    activeContractVersionId: connection.activeContractVersionId,
  };
}

const string = { type: 'string' } as const;

export const connectionViewSchema = {
  type: 'object',
  required: [
    'id',
    'workspaceIntegrationId',
    'name',
    'provider',
    'direction',
    'protocol',
    'environment',
    'revision',
    'credentialStatus',
    'activeContractVersionId',
  ],
  properties: {
    id: string,
    workspaceIntegrationId: string,
    name: string,
    provider: string,
    direction: string,
    protocol: string,
    environment: { type: 'object', required: ['id', 'category', 'mode'], properties: { id: string, category: string, mode: string } },
    revision: string,
    credentialStatus: string,
    activeContractVersionId: { type: ['string', 'null'] },
  },
} as const;
