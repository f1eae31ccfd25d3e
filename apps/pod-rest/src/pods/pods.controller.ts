import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import { PodCreateDto, PodUpdateDto, type Principal } from '@runplane/contracts';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { PodGetQuery, PodListQuery } from './pod-query.dto.js';
import { PodsService } from './pods.service.js';

/**
 * RunPod REST v1 Pods: create 201,
 * bare-array list, get with include flags, update by PATCH or `POST .../update`, delete 204, and
 * start/stop/restart/reset answering the Pod. Another user's Pod is "not found".
 */
const POD = { description: 'The Pod.', schema: schemaRef('Pod') };

@ApiTags('Pods')
@Controller('v1/pods')
export class PodsController {
  constructor(private readonly pods: PodsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create and start a Pod',
    description: 'It needs an image: `imageName`, or a `templateId` whose image it takes.',
  })
  @ApiCreatedResponse(POD)
  @ApiError(
    400,
    'Invalid field, no image, or a template, GPU type, CPU flavor or network volume that does not exist.',
  )
  @HttpCode(201)
  create(@CurrentPrincipal() principal: Principal, @Body() body: PodCreateDto) {
    return this.pods.create(principal, body);
  }

  @Get()
  @ApiOperation({
    summary: "List the caller's Pods",
    description:
      'Serverless workers only with `includeWorkers=true` (or an `endpointId` filter); at most 1000.',
  })
  @ApiOkResponse({ description: 'The Pods.', schema: listOf('Pod') })
  list(@CurrentPrincipal() principal: Principal, @Query() q: PodListQuery) {
    return this.pods.list(
      principal,
      {
        includeWorkers: q.includeWorkers ?? false,
        computeType: q.computeType,
        cpuFlavorIds: q.cpuFlavorId,
        desiredStatus: q.desiredStatus,
        endpointId: q.endpointId,
        gpuTypeIds: q.gpuTypeId,
        id: q.id,
        imageName: q.imageName,
        name: q.name,
        networkVolumeId: q.networkVolumeId,
        templateId: q.templateId,
      },
      q,
    );
  }

  @Get(':podId')
  @ApiOperation({
    summary: 'Get a Pod',
    description:
      'The include flags add `machine`, `networkVolume`, `savingsPlans` and `template`; a serverless worker needs `includeWorkers=true`.',
  })
  @ApiOkResponse(POD)
  @ApiErrors(404)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Query() q: PodGetQuery,
  ) {
    return this.pods.get(principal, podId, q);
  }

  @Patch(':podId')
  @ApiOperation({
    summary: 'Update a Pod',
    description:
      'A change to what runs (image, command, env, ports, disks) restarts a running Pod.',
  })
  @ApiOkResponse(POD)
  @ApiErrors(404)
  @ApiError(409, 'The Pod is locked (`locked: true`): unlock it first.')
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Body() body: PodUpdateDto,
  ) {
    return this.pods.update(principal, podId, body);
  }

  @Post(':podId/update')
  @ApiOperation({
    summary: 'Update a Pod (POST form)',
    description: 'A change to what runs restarts a running Pod.',
  })
  @ApiOkResponse(POD)
  @ApiErrors(404)
  @ApiError(409, 'The Pod is locked (`locked: true`): unlock it first.')
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Body() body: PodUpdateDto,
  ) {
    return this.pods.update(principal, podId, body);
  }

  @Delete(':podId')
  @ApiOperation({ summary: 'Terminate and delete a Pod' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(404)
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
  ): Promise<void> {
    await this.pods.delete(principal, podId);
  }

  @Post(':podId/start')
  @ApiOperation({ summary: 'Start a stopped Pod' })
  @ApiOkResponse(POD)
  @ApiErrors(400, 404)
  @HttpCode(200)
  start(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.start(principal, podId);
  }

  @Post(':podId/stop')
  @ApiOperation({ summary: 'Stop a Pod (its volume is kept)' })
  @ApiOkResponse(POD)
  @ApiErrors(404)
  @ApiError(409, 'The Pod is locked (`locked: true`): unlock it first.')
  @HttpCode(200)
  stop(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.stop(principal, podId);
  }

  @Post(':podId/restart')
  @ApiOperation({ summary: 'Restart a Pod' })
  @ApiOkResponse(POD)
  @ApiErrors(400, 404)
  @HttpCode(200)
  restart(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.restart(principal, podId);
  }

  @Post(':podId/reset')
  @ApiOperation({ summary: 'Reset a Pod: restart it with its container disk wiped' })
  @ApiOkResponse(POD)
  @ApiErrors(400, 404)
  @ApiError(409, 'The Pod is locked (`locked: true`): unlock it first.')
  @HttpCode(200)
  reset(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.reset(principal, podId);
  }
}
