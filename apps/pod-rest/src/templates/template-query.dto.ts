import { IsBoolean, IsOptional } from 'class-validator';
import { QueryFlag } from '../http/query-flags.js';

/**
 * Query of `GET /v1/templates` and `GET /v1/templates/{id}`. Runplane has no
 * RunPod-managed or endpoint-bound templates, so those two flags change nothing; they are accepted.
 */
export class TemplateListQuery {
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includePublicTemplates must be true or false' })
  includePublicTemplates?: boolean;

  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeRunpodTemplates must be true or false' })
  includeRunpodTemplates?: boolean;

  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeEndpointBoundTemplates must be true or false' })
  includeEndpointBoundTemplates?: boolean;
}
