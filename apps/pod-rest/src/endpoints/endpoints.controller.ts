import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import { EndpointCreateDto, EndpointUpdateDto, type Principal } from '@runplane/contracts';
import { ApiError, ApiErrors, schemaRef } from '@runplane/platform';
import { EndpointQuery } from './endpoint-query.dto.js';
import { EndpointsService } from './endpoints.service.js';

/**
 * RunPod REST v1 endpoints: create 200, bare-array list, get,
 * update by PATCH or `POST .../update`, delete 204. Another user's endpoint is "not found".
 */
/** An endpoint, with its template under `template` when `includeTemplate=true`. */
const WITH_TEMPLATE = {
  allOf: [
    schemaRef('Endpoint'),
    { type: 'object', properties: { template: schemaRef('Template') } },
  ],
};
const UPDATED = {
  description: 'The endpoint after the change (a new `version` when its workers must be replaced).',
  schema: schemaRef('Endpoint'),
};

@ApiTags('Endpoints')
@Controller('v1/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a serverless endpoint',
    description:
      'Defaults: workersMin 0, workersMax 3, idleTimeout 5 s, scalerType QUEUE_DELAY, scalerValue 4, executionTimeoutMs 600000.',
  })
  @ApiOkResponse({ description: 'The endpoint.', schema: schemaRef('Endpoint') })
  @ApiError(400, 'Invalid field, or `templateId` names no template the caller may use.')
  @ApiError(503)
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: EndpointCreateDto) {
    return this.endpoints.create(principal, body);
  }

  @Get()
  @ApiOperation({ summary: "List the caller's endpoints" })
  @ApiOkResponse({ description: 'The endpoints.', schema: { type: 'array', items: WITH_TEMPLATE } })
  list(@CurrentPrincipal() principal: Principal, @Query() query: EndpointQuery) {
    return this.endpoints.list(principal, query.includeTemplate ?? false);
  }

  @Get(':endpointId')
  @ApiOperation({ summary: 'Get an endpoint' })
  @ApiOkResponse({ description: 'The endpoint.', schema: WITH_TEMPLATE })
  @ApiErrors(404)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() query: EndpointQuery,
  ) {
    return this.endpoints.get(principal, endpointId, query.includeTemplate ?? false);
  }

  @Patch(':endpointId')
  @ApiOperation({ summary: 'Update an endpoint', description: 'Only the fields given change.' })
  @ApiOkResponse(UPDATED)
  @ApiErrors(404, 503)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: EndpointUpdateDto,
  ) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Post(':endpointId/update')
  @ApiOperation({
    summary: 'Update an endpoint (POST form)',
    description: 'Only the fields given change.',
  })
  @ApiOkResponse(UPDATED)
  @ApiErrors(404, 503)
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: EndpointUpdateDto,
  ) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Delete(':endpointId')
  @ApiOperation({
    summary: 'Delete an endpoint',
    description: 'Its queued and running jobs are cancelled and its workers stopped.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(404)
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
  ): Promise<void> {
    await this.endpoints.delete(principal, endpointId);
  }
}
