import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { QueryFlag } from '../http/query-flags.js';

/** Most lines one answer carries (a follower gets the rest as they come). */
export const MAX_LOG_LINES = 10_000;
const TAIL = { message: `tail must be an integer from 1 to ${MAX_LOG_LINES}` };
const SINCE = /^(\d+|\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)$/;

/** `?tail=&since=&follow=` of the log routes of Pods and workers. */
export class LogQuery {
  /** Only the last n lines (default: the newest 10000). */
  @IsOptional()
  @Type(() => Number)
  @IsInt(TAIL)
  @Min(1, TAIL)
  @Max(MAX_LOG_LINES, TAIL)
  tail?: number;

  /** Lines written from this time on: an ISO 8601 time, or a number of seconds before now. */
  @IsOptional()
  @IsString()
  @Matches(SINCE, { message: 'since must be an ISO 8601 time or a number of seconds' })
  since?: string;

  /** Keep the answer open as server-sent events (`text/event-stream`) until the workload ended. */
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'follow must be true or false' })
  follow?: boolean;
}

/** `?jobId=` of `GET /v1/endpoints/{id}/logs`. */
export class JobLogQuery {
  /** The job whose lines are wanted: what the endpoint's workers wrote while they held it. */
  @IsString({ message: 'jobId must be a job id' })
  @IsNotEmpty({ message: 'jobId must be a job id' })
  jobId!: string;
}
