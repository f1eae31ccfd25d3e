import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import {
  NetworkVolumeCreateDto,
  NetworkVolumeUpdateDto,
  type Principal,
} from '@runplane/contracts';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { NetworkVolumesService } from './network-volumes.service.js';

const VOLUME = { description: 'The network volume.', schema: schemaRef('NetworkVolume') };

/**
 * RunPod REST v1 network volumes: create 200, bare-array list, get, update by PATCH or
 * `POST .../update`, delete 204. Another user's volume is "not found".
 */
@ApiTags('Network volumes')
@Controller('v1/networkvolumes')
export class NetworkVolumesController {
  constructor(private readonly volumes: NetworkVolumesService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a network volume',
    description:
      '`name`, `size` (GB, 1-4000) and `dataCenterId` (a data center of this installation) are required.',
  })
  @ApiOkResponse(VOLUME)
  @ApiError(400, 'Invalid field, or a data center this installation does not have.')
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: NetworkVolumeCreateDto) {
    return this.volumes.create(principal.userId, body);
  }

  @Get()
  @ApiOperation({ summary: "List the caller's network volumes" })
  @ApiOkResponse({ description: 'The network volumes.', schema: listOf('NetworkVolume') })
  list(@CurrentPrincipal() principal: Principal) {
    return this.volumes.list(principal.userId);
  }

  @Get(':networkVolumeId')
  @ApiOperation({ summary: 'Get a network volume' })
  @ApiOkResponse(VOLUME)
  @ApiErrors(404)
  get(@CurrentPrincipal() principal: Principal, @Param('networkVolumeId') id: string) {
    return this.volumes.get(principal.userId, id);
  }

  @Patch(':networkVolumeId')
  @ApiOperation({
    summary: 'Rename or grow a network volume',
    description: 'A volume never shrinks.',
  })
  @ApiOkResponse(VOLUME)
  @ApiErrors(404)
  @ApiError(400, 'Invalid field, or a size below the current one.')
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
    @Body() body: NetworkVolumeUpdateDto,
  ) {
    return this.volumes.update(principal.userId, id, body);
  }

  @Post(':networkVolumeId/update')
  @ApiOperation({ summary: 'Rename or grow a network volume (POST form)' })
  @ApiOkResponse(VOLUME)
  @ApiErrors(404)
  @ApiError(400, 'Invalid field, or a size below the current one.')
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
    @Body() body: NetworkVolumeUpdateDto,
  ) {
    return this.volumes.update(principal.userId, id, body);
  }

  @Delete(':networkVolumeId')
  @ApiOperation({ summary: 'Delete a network volume and its data' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(404)
  @ApiError(409, 'A Pod still uses the volume: delete the Pod first.')
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('networkVolumeId') id: string,
  ): Promise<void> {
    await this.volumes.delete(principal.userId, id);
  }
}
