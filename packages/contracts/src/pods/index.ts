export * from './pod.dto.js';
