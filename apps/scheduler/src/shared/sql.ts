import { Injectable } from '@nestjs/common';
import { DatabaseTargets } from '@runplane/database';

/**
 * Schema-qualified table names for the few statements Prisma cannot express (claims with
 * `FOR UPDATE SKIP LOCKED`, `UPDATE ... RETURNING`). Prisma qualifies its own queries with the
 * service's schema; raw SQL must do the same, since the embedded database is shared by every
 * service and has no per-service search_path.
 */
@Injectable()
export class SchedulerTables {
  readonly job: string;
  readonly chunk: string;
  readonly event: string;
  readonly stop: string;
  readonly worker: string;
  readonly coldStart: string;
  readonly lease: string;
  readonly jobStatus: string;

  constructor(targets: DatabaseTargets) {
    const schema = quote(targets.targetFor('scheduler').schema);
    this.job = `${schema}."Job"`;
    this.chunk = `${schema}."JobStreamChunk"`;
    this.event = `${schema}."JobEvent"`;
    this.stop = `${schema}."JobStop"`;
    this.worker = `${schema}."Worker"`;
    this.coldStart = `${schema}."ColdStart"`;
    this.lease = `${schema}."Lease"`;
    this.jobStatus = `${schema}."JobStatus"`;
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
