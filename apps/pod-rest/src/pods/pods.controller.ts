import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { PodCreateDto, PodUpdateDto, type Principal } from '@runplane/contracts';
import { PodGetQuery, PodListQuery } from './pod-query.dto.js';
import {
  CreatePodDocs,
  DeletePodDocs,
  GetPodDocs,
  ListPodsDocs,
  PodsControllerDocs,
  ResetPodDocs,
  RestartPodDocs,
  StartPodDocs,
  StopPodDocs,
  UpdatePodByPostDocs,
  UpdatePodDocs,
} from './pods.docs.js';
import { PodsService } from './pods.service.js';

/**
 * RunPod REST v1 Pods: create 201,
 * bare-array list, get with include flags, update by PATCH or `POST .../update`, delete 204, and
 * start/stop/restart/reset answering the Pod. Another user's Pod is "not found".
 */
@PodsControllerDocs()
@Controller('v1/pods')
export class PodsController {
  constructor(private readonly pods: PodsService) {}

  @Post()
  @CreatePodDocs()
  @HttpCode(201)
  create(@CurrentPrincipal() principal: Principal, @Body() body: PodCreateDto) {
    return this.pods.create(principal, body);
  }

  @Get()
  @ListPodsDocs()
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
  @GetPodDocs()
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Query() q: PodGetQuery,
  ) {
    return this.pods.get(principal, podId, q);
  }

  @Patch(':podId')
  @UpdatePodDocs()
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Body() body: PodUpdateDto,
  ) {
    return this.pods.update(principal, podId, body);
  }

  @Post(':podId/update')
  @UpdatePodByPostDocs()
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Body() body: PodUpdateDto,
  ) {
    return this.pods.update(principal, podId, body);
  }

  @Delete(':podId')
  @DeletePodDocs()
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
  ): Promise<void> {
    await this.pods.delete(principal, podId);
  }

  @Post(':podId/start')
  @StartPodDocs()
  @HttpCode(200)
  start(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.start(principal, podId);
  }

  @Post(':podId/stop')
  @StopPodDocs()
  @HttpCode(200)
  stop(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.stop(principal, podId);
  }

  @Post(':podId/restart')
  @RestartPodDocs()
  @HttpCode(200)
  restart(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.restart(principal, podId);
  }

  @Post(':podId/reset')
  @ResetPodDocs()
  @HttpCode(200)
  reset(@CurrentPrincipal() principal: Principal, @Param('podId') podId: string) {
    return this.pods.reset(principal, podId);
  }
}
