export * from './secret.dto.js';
export * from './secret-references.js';
export * from './registry-auth.dto.js';
