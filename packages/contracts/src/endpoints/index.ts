export * from './endpoint.dto.js';
