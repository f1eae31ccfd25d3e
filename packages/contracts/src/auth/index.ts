export * from './principal.js';
