export * from './http.js';
export * from './queue-client.js';
export * from './admin-client.js';
export * from './operations-client.js';
