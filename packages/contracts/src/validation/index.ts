export * from './no-nul.js';
