export * from './job-status.js';
export * from './limits.js';
export * from './job-request.dto.js';
export * from './job-record.js';
