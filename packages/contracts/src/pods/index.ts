export * from './pod.dto.js';
export * from './network-volume.dto.js';
export * from './catalogue.js';
export * from './workload-log.js';
