export * from './worker-protocol.js';
