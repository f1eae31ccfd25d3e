export * from './http.js';
export * from './queue-client.js';
