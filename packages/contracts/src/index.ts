export * from './services.js';
export * from './errors/index.js';
export * from './auth/index.js';
export * from './jobs/index.js';
export * from './bus/index.js';
export * from './client/index.js';
