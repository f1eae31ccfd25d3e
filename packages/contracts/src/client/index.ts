export * from './http.js';
export * from './queue-client.js';
export * from './admin-client.js';
export * from './operations-client.js';
// The job states a browser client needs without the DTOs (whose decorators need reflect-metadata).
export { isFinalStatus, JOB_STATUSES, type JobStatus } from '../jobs/job-status.js';
