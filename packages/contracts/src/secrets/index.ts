export * from './secret.dto.js';
export * from './secret-references.js';
