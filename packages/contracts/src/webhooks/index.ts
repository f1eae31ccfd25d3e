export * from './signature.js';
export * from './delivery.js';
