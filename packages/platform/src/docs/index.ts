export * from './api-docs.js';
export * from './decorators.js';
export * from './openapi-document.js';
