import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { ContainerRegistryAuthCreateDto, type Principal } from '@runplane/contracts';
import {
  CreateRegistryAuthDocs,
  DeleteRegistryAuthDocs,
  GetRegistryAuthDocs,
  ListRegistryAuthsDocs,
  RegistryAuthsControllerDocs,
} from './registry-auths.docs.js';
import { RegistryAuthsService } from './registry-auths.service.js';

/** `/v1/containerregistryauth` as RunPod's REST v1 has it: create 200, list, get, delete 204. */
@RegistryAuthsControllerDocs()
@Controller('v1/containerregistryauth')
export class RegistryAuthsController {
  constructor(private readonly auths: RegistryAuthsService) {}

  @Post()
  @CreateRegistryAuthDocs()
  @HttpCode(200)
  create(@CurrentPrincipal() caller: Principal, @Body() body: ContainerRegistryAuthCreateDto) {
    return this.auths.create(caller.userId, body);
  }

  @Get()
  @ListRegistryAuthsDocs()
  list(@CurrentPrincipal() caller: Principal) {
    return this.auths.list(caller.userId);
  }

  @Get(':containerRegistryAuthId')
  @GetRegistryAuthDocs()
  get(@CurrentPrincipal() caller: Principal, @Param('containerRegistryAuthId') id: string) {
    return this.auths.get(caller.userId, id);
  }

  @Delete(':containerRegistryAuthId')
  @DeleteRegistryAuthDocs()
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() caller: Principal,
    @Param('containerRegistryAuthId') id: string,
  ): Promise<void> {
    await this.auths.delete(caller.userId, id);
  }
}
