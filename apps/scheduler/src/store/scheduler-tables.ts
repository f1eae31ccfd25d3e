import { Injectable } from '@nestjs/common';
import { DatabaseTargets } from '@runplane/database';
import { Prisma } from '../generated/prisma/client.js';

/**
 * Schema-qualified table names for the few statements Prisma cannot express (claims with
 * `FOR UPDATE SKIP LOCKED`, `UPDATE ... RETURNING`). Prisma qualifies its own queries with the
 * service's schema; raw SQL must do the same, since the embedded database is shared by every
 * service and has no per-service search_path.
 */
@Injectable()
export class SchedulerTables {
  readonly job: string;
  readonly endpoint: string;
  readonly chunk: string;
  readonly event: string;
  readonly stop: string;
  readonly worker: string;
  readonly coldStart: string;
  readonly lease: string;
  readonly jobCount: string;
  readonly jobCountChange: string;
  readonly jobStatus: string;
  /** The same names as fragments of `Prisma.sql` statements (parameters named in place). */
  readonly sql: Record<
    | 'job'
    | 'endpoint'
    | 'chunk'
    | 'event'
    | 'stop'
    | 'worker'
    | 'jobCount'
    | 'jobCountChange'
    | 'jobStatus',
    Prisma.Sql
  >;

  constructor(targets: DatabaseTargets) {
    const schema = quote(targets.targetFor('scheduler').schema);
    this.job = `${schema}."Job"`;
    this.endpoint = `${schema}."Endpoint"`;
    this.chunk = `${schema}."JobStreamChunk"`;
    this.event = `${schema}."JobEvent"`;
    this.stop = `${schema}."JobStop"`;
    this.worker = `${schema}."Worker"`;
    this.coldStart = `${schema}."ColdStart"`;
    this.lease = `${schema}."Lease"`;
    this.jobCount = `${schema}."EndpointJobCount"`;
    this.jobCountChange = `${schema}."EndpointJobCountChange"`;
    this.jobStatus = `${schema}."JobStatus"`;
    this.sql = {
      job: Prisma.raw(this.job),
      endpoint: Prisma.raw(this.endpoint),
      chunk: Prisma.raw(this.chunk),
      event: Prisma.raw(this.event),
      stop: Prisma.raw(this.stop),
      worker: Prisma.raw(this.worker),
      jobCount: Prisma.raw(this.jobCount),
      jobCountChange: Prisma.raw(this.jobCountChange),
      jobStatus: Prisma.raw(this.jobStatus),
    };
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
