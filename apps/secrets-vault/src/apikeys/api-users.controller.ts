import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { CreateApiKeyDto, CreateUserDto, type Principal } from '@runplane/contracts';
import {
  ApiUsersControllerDocs,
  CreateKeyDocs,
  CreateUserDocs,
  CurrentKeyDocs,
  ListKeysDocs,
  ListUsersDocs,
  RevokeKeyDocs,
} from './api-users.docs.js';
import { ApiUsersService } from './api-users.service.js';

/** `/v1/users` and `/v1/apikeys`. Successful creates are 200, deletes 204 (RunPod REST v1 style). */
@ApiUsersControllerDocs()
@Controller('v1')
export class ApiUsersController {
  constructor(private readonly users: ApiUsersService) {}

  @Post('users')
  @CreateUserDocs()
  @HttpCode(200)
  @RequireAccess('admin')
  createUser(@Body() body: CreateUserDto) {
    return this.users.createUser(body);
  }

  @Get('users')
  @ListUsersDocs()
  @RequireAccess('admin')
  listUsers() {
    return this.users.listUsers();
  }

  @Post('apikeys')
  @CreateKeyDocs()
  @HttpCode(200)
  createKey(@CurrentPrincipal() caller: Principal, @Body() body: CreateApiKeyDto) {
    return this.users.createKey(caller, body);
  }

  @Get('apikeys')
  @ListKeysDocs()
  listKeys(@CurrentPrincipal() caller: Principal, @Query('userId') userId?: string) {
    return this.users.listKeys(caller, typeof userId === 'string' ? userId : undefined);
  }

  @Get('apikeys/current')
  @CurrentKeyDocs()
  currentKey(@CurrentPrincipal() caller: Principal) {
    return this.users.currentKey(caller);
  }

  @Delete('apikeys/:keyId')
  @RevokeKeyDocs()
  @HttpCode(204)
  async revokeKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId') keyId: string,
  ): Promise<void> {
    await this.users.revokeKey(caller, keyId);
  }
}
