import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import { ContainerRegistryAuthCreateDto, type Principal } from '@runplane/contracts';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { RegistryAuthsService } from './registry-auths.service.js';

/** `/v1/containerregistryauth` as RunPod's REST v1 has it: create 200, list, get, delete 204. */
@ApiTags('Container registry auths')
@Controller('v1/containerregistryauth')
export class RegistryAuthsController {
  constructor(private readonly auths: RegistryAuthsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a container registry auth',
    description:
      'Credentials for a private registry, named by templates and Pods through `containerRegistryAuthId`. The username and password are stored sealed and never returned.',
  })
  @ApiOkResponse({
    description: 'The auth (id and name).',
    schema: schemaRef('ContainerRegistryAuth'),
  })
  @ApiError(409, 'The name is taken by another of your registry auths.')
  @HttpCode(200)
  create(@CurrentPrincipal() caller: Principal, @Body() body: ContainerRegistryAuthCreateDto) {
    return this.auths.create(caller.userId, body);
  }

  @Get()
  @ApiOperation({ summary: 'List your container registry auths' })
  @ApiOkResponse({ description: 'Id and name of each.', schema: listOf('ContainerRegistryAuth') })
  list(@CurrentPrincipal() caller: Principal) {
    return this.auths.list(caller.userId);
  }

  @Get(':containerRegistryAuthId')
  @ApiOperation({ summary: 'Get a container registry auth' })
  @ApiOkResponse({ description: 'Its id and name.', schema: schemaRef('ContainerRegistryAuth') })
  @ApiErrors(404)
  get(@CurrentPrincipal() caller: Principal, @Param('containerRegistryAuthId') id: string) {
    return this.auths.get(caller.userId, id);
  }

  @Delete(':containerRegistryAuthId')
  @ApiOperation({ summary: 'Delete a container registry auth' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(404)
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() caller: Principal,
    @Param('containerRegistryAuthId') id: string,
  ): Promise<void> {
    await this.auths.delete(caller.userId, id);
  }
}
