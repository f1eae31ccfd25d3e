export * from './template.dto.js';
export * from './docker-args.js';
