import { defineSignal } from './definitions.js';

/**
 * Every worker call (job-take, job-done, ping) reaches the scheduler through queue-api. A worker's
 * silence therefore means something only while queue-api relays: each replica announces that it
 * does every `RELAY_HEARTBEAT_MS`, and the scheduler counts no silence while none has for
 * `RELAY_SILENT_AFTER_MS` (queue-api down, or the bus between them). Without it, an outage of
 * queue-api longer than three ping intervals would make every live worker look lost.
 */
export interface WorkerRelaySignal {
  /** The announcing queue-api replica. */
  replica: string;
}

/**
 * Workers' long polls a queue-api replica stopped holding because the worker's connection closed
 * (the worker died or left): the scheduler stops counting their rounds as hearing the worker.
 */
export interface WorkerPollsEndedSignal {
  replica: string;
  /** The `pollId`s of the ended polls (`WorkerPollRequest`). */
  polls: string[];
}

export const RELAY_HEARTBEAT_MS = 500;
/**
 * Three heartbeats. It must stay below two ping intervals: a worker's last ping before an outage
 * can be one interval old, and it is lost three intervals after it.
 */
export const RELAY_SILENT_AFTER_MS = 3 * RELAY_HEARTBEAT_MS;

export const QueueApiSignals = {
  workerRelay: defineSignal<WorkerRelaySignal>('queue-api.workers.relaying'),
  workerPollsEnded: defineSignal<WorkerPollsEndedSignal>('queue-api.workers.polls-ended'),
} as const;
