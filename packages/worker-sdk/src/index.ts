/**
 * @runplane/worker-sdk — write Runplane (RunPod-compatible) serverless workers in JavaScript.
 *
 *   import { start } from '@runplane/worker-sdk';
 *   start({ handler: async (job) => ({ echo: job.input.echo }) });
 */
export { start } from './start.js';
export { createWorker, type Worker } from './worker.js';
export { readWorkerConfig, DEFAULT_PING_INTERVAL_MS, type WorkerConfig } from './config.js';
export { createLogger, type Logger } from './logger.js';
export { SDK_VERSION } from './version.js';
export type {
  Handler,
  HandlerResult,
  Job,
  JobContext,
  JobDoneBody,
  StartOptions,
  WorkerOptions,
} from './types.js';
