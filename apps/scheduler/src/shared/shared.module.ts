import { Module } from '@nestjs/common';
import { SchedulerSettings } from '../settings.js';
import { JobChanges } from './job-changes.js';

/** What every part of the scheduler uses: its settings and the in-memory wake-ups of long polls. */
@Module({
  providers: [SchedulerSettings, JobChanges],
  exports: [SchedulerSettings, JobChanges],
})
export class SharedModule {}
