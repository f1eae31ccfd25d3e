// Decorators of the DTOs below read and write metadata at load time.
import 'reflect-metadata';

export * from './services.js';
export * from './errors/index.js';
export * from './validation/index.js';
export * from './auth/index.js';
export * from './jobs/index.js';
export * from './endpoints/index.js';
export * from './templates/index.js';
export * from './pods/index.js';
export * from './secrets/index.js';
export * from './workers/index.js';
export * from './bus/index.js';
export * from './client/index.js';
export * from './webhooks/index.js';
