import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { EndpointCreateDto, EndpointUpdateDto, type Principal } from '@runplane/contracts';
import {
  CreateEndpointDocs,
  DeleteEndpointDocs,
  EndpointsControllerDocs,
  GetEndpointDocs,
  ListEndpointsDocs,
  UpdateEndpointByPostDocs,
  UpdateEndpointDocs,
} from './endpoints.docs.js';
import { EndpointQuery } from './endpoint-query.dto.js';
import { EndpointsService } from './endpoints.service.js';

/**
 * RunPod REST v1 endpoints: create 200, bare-array list, get,
 * update by PATCH or `POST .../update`, delete 204. Another user's endpoint is "not found".
 */
@EndpointsControllerDocs()
@Controller('v1/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Post()
  @CreateEndpointDocs()
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: EndpointCreateDto) {
    return this.endpoints.create(principal, body);
  }

  @Get()
  @ListEndpointsDocs()
  list(@CurrentPrincipal() principal: Principal, @Query() query: EndpointQuery) {
    return this.endpoints.list(principal, query.includeTemplate ?? false);
  }

  @Get(':endpointId')
  @GetEndpointDocs()
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() query: EndpointQuery,
  ) {
    return this.endpoints.get(principal, endpointId, query.includeTemplate ?? false);
  }

  @Patch(':endpointId')
  @UpdateEndpointDocs()
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: EndpointUpdateDto,
  ) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Post(':endpointId/update')
  @UpdateEndpointByPostDocs()
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: EndpointUpdateDto,
  ) {
    return this.endpoints.update(principal, endpointId, body);
  }

  @Delete(':endpointId')
  @DeleteEndpointDocs()
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
  ): Promise<void> {
    await this.endpoints.delete(principal, endpointId);
  }
}
