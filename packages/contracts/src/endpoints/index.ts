export * from './endpoint.dto.js';
export * from './endpoint-operations.js';
