export * from './no-nul.js';
export * from './env-map.js';
