export * from './definitions.js';
export * from './scheduler.js';
export * from './vault.js';
