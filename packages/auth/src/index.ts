export * from './api-key.js';
export * from './access.js';
export * from './key-verifier.js';
export * from './api-key.guard.js';
export * from './auth.module.js';
export * from './auth-throttle.js';
