import { IsBoolean, IsOptional } from 'class-validator';
import { QueryFlag } from '../http/query-flags.js';

/** Query of `GET /v1/endpoints` and `GET /v1/endpoints/{id}`. */
export class EndpointQuery {
  /** Embeds the endpoint's template as `template`. */
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeTemplate must be true or false' })
  includeTemplate?: boolean;

  /** Accepted as RunPod's clients send it; an endpoint's workers are listed by `GET /v1/endpoints/{id}/workers`. */
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeWorkers must be true or false' })
  includeWorkers?: boolean;
}
