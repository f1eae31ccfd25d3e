import { randomUUID } from 'node:crypto';

/** Opaque, unguessable job ids (122 random bits); runsync jobs carry a `sync-` prefix like RunPod's. */
export function newJobId(mode: 'run' | 'runsync'): string {
  return mode === 'runsync' ? `sync-${randomUUID()}` : randomUUID();
}
