export * from './no-nul.js';
export * from './env-map.js';
export * from './kept-as-sent.js';
