export * from './template.dto.js';
