import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { EndpointCreateDto, EndpointUpdateDto, type Principal } from '@runplane/contracts';
import { EndpointQuery } from './endpoint-query.dto.js';
import { EndpointsService } from './endpoints.service.js';

/**
 * RunPod REST v1 endpoints (reference §4.1, §4.2; contract §6): create 200, bare-array list, get,
 * update by PATCH or `POST .../update`, delete 204. Another user's endpoint is "not found".
 */
@Controller('v1/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: EndpointCreateDto) {
    return this.endpoints.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query() query: EndpointQuery) {
    return this.endpoints.list(principal, query.includeTemplate ?? false);
  }

  @Get(':endpointId')
  get(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Query() query: EndpointQuery) {
    return this.endpoints.get(principal, endpointId, query.includeTemplate ?? false);
  }

  @Patch(':endpointId')
  update(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Body() body: EndpointUpdateDto) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Post(':endpointId/update')
  @HttpCode(200)
  updateByPost(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Body() body: EndpointUpdateDto) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Delete(':endpointId')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string): Promise<void> {
    await this.endpoints.delete(principal, endpointId);
  }
}
