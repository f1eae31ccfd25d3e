export * from './principal.js';
export * from './apikey.dto.js';
