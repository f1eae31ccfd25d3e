import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { JOB_LIMITS, JOB_STATUSES, type JobStatus } from '@runplane/contracts';

// Query values arrive as strings: @Type converts them, so "abc" and "1.5" fail @IsInt. Every
// constraint of a field carries the same message, which names the field and its range.

const range = (name: string, { min, max }: { min: number; max: number }) => ({
  message: `${name} must be an integer number of milliseconds from ${min} to ${max}`,
});

const SYNC_WAIT = range('wait', JOB_LIMITS.runsyncWait);
const STREAM_WAIT = range('wait', JOB_LIMITS.streamWait);
const TTL = range('ttl', JOB_LIMITS.ttl);

/** `?wait=` of /runsync and /status-sync: how long the call blocks (default 90000). */
export class SyncWaitQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt(SYNC_WAIT)
  @Min(JOB_LIMITS.runsyncWait.min, SYNC_WAIT)
  @Max(JOB_LIMITS.runsyncWait.max, SYNC_WAIT)
  wait?: number;
}

/** `?wait=` of /stream: how long an empty poll waits for a chunk (default 10000). */
export class StreamWaitQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt(STREAM_WAIT)
  @Min(JOB_LIMITS.streamWait.min, STREAM_WAIT)
  @Max(JOB_LIMITS.streamWait.max, STREAM_WAIT)
  wait?: number;
}

/** `?ttl=` of /status: sets the job's TTL, counted from its submission. */
export class StatusQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt(TTL)
  @Min(JOB_LIMITS.ttl.min, TTL)
  @Max(JOB_LIMITS.ttl.max, TTL)
  ttl?: number;
}

const LIMIT = { message: 'limit must be an integer from 1 to 100' };

/** `GET /requests?status=&limit=&cursor=`. */
export class ListRequestsQuery {
  @IsOptional()
  @IsIn(JOB_STATUSES, { message: `status must be one of ${JOB_STATUSES.join(', ')}` })
  status?: JobStatus;

  @IsOptional()
  @Type(() => Number)
  @IsInt(LIMIT)
  @Min(1, LIMIT)
  @Max(100, LIMIT)
  limit?: number;

  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(512, { message: 'cursor must be at most 512 characters' })
  cursor?: string;
}
