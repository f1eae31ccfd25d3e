export * from './definitions.js';
export * from './scheduler.js';
export * from './vault.js';
export * from './templates.js';
export * from './pods.js';
export * from './webhooks.js';
export * from './pod-api.js';
export * from './users.js';
