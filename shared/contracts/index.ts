export { importOpenApi, isJsonMediaType, type OpenApiProtocol } from './importOpenApi.js';
export { importJsonSchema } from './importJsonSchema.js';
export { operationKey, normalizeStatusSelector, ANY_STATUS_SELECTOR } from './operationKey.js';
export * from './types.js';
