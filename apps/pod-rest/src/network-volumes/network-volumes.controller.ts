import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import {
  NetworkVolumeCreateDto,
  NetworkVolumeUpdateDto,
  type Principal,
} from '@runplane/contracts';
import {
  CreateNetworkVolumeDocs,
  DeleteNetworkVolumeDocs,
  GetNetworkVolumeDocs,
  ListNetworkVolumesDocs,
  NetworkVolumesControllerDocs,
  UpdateNetworkVolumeByPostDocs,
  UpdateNetworkVolumeDocs,
} from './network-volumes.docs.js';
import { NetworkVolumesService } from './network-volumes.service.js';

/**
 * RunPod REST v1 network volumes: create 200, bare-array list, get, update by PATCH or
 * `POST .../update`, delete 204. Another user's volume is "not found".
 */
@NetworkVolumesControllerDocs()
@Controller('v1/networkvolumes')
export class NetworkVolumesController {
  constructor(private readonly volumes: NetworkVolumesService) {}

  @Post()
  @CreateNetworkVolumeDocs()
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: NetworkVolumeCreateDto) {
    return this.volumes.create(principal.userId, body);
  }

  @Get()
  @ListNetworkVolumesDocs()
  list(@CurrentPrincipal() principal: Principal) {
    return this.volumes.list(principal.userId);
  }

  @Get(':networkVolumeId')
  @GetNetworkVolumeDocs()
  get(@CurrentPrincipal() principal: Principal, @Param('networkVolumeId') id: string) {
    return this.volumes.get(principal.userId, id);
  }

  @Patch(':networkVolumeId')
  @UpdateNetworkVolumeDocs()
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
    @Body() body: NetworkVolumeUpdateDto,
  ) {
    return this.volumes.update(principal.userId, id, body);
  }

  @Post(':networkVolumeId/update')
  @UpdateNetworkVolumeByPostDocs()
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
    @Body() body: NetworkVolumeUpdateDto,
  ) {
    return this.volumes.update(principal.userId, id, body);
  }

  @Delete(':networkVolumeId')
  @DeleteNetworkVolumeDocs()
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
  ): Promise<void> {
    await this.volumes.delete(principal.userId, id);
  }
}
