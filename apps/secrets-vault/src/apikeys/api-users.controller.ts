import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { CreateApiKeyDto, CreateUserDto, type Principal } from '@runplane/contracts';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { ApiUsersService } from './api-users.service.js';

/** `/v1/users` and `/v1/apikeys`. Successful creates are 200, deletes 204 (RunPod REST v1 style). */
@ApiTags('Users and API keys')
@Controller('v1')
export class ApiUsersController {
  constructor(private readonly users: ApiUsersService) {}

  @Post('users')
  @ApiOperation({ summary: 'Create a user' })
  @ApiOkResponse({ description: 'The user.', schema: schemaRef('User') })
  @HttpCode(200)
  @RequireAccess('admin')
  createUser(@Body() body: CreateUserDto) {
    return this.users.createUser(body);
  }

  @Get('users')
  @ApiOperation({ summary: 'List users' })
  @ApiOkResponse({ description: 'Every user.', schema: listOf('User') })
  @RequireAccess('admin')
  listUsers() {
    return this.users.listUsers();
  }

  @Post('apikeys')
  @ApiOperation({
    summary: 'Create an API key',
    description:
      "`userId` defaults to the caller's user; only an admin may name another. A key is never wider than the caller's own; a `worker` key needs the `endpointId` whose worker routes it serves.",
  })
  @ApiOkResponse({
    description: 'The key, with its value `key` (shown only here).',
    schema: schemaRef('CreatedApiKey'),
  })
  @ApiErrors(404)
  @HttpCode(200)
  createKey(@CurrentPrincipal() caller: Principal, @Body() body: CreateApiKeyDto) {
    return this.users.createKey(caller, body);
  }

  @Get('apikeys')
  @ApiOperation({
    summary: 'List API keys (never their values)',
    description: "The caller's user's keys; an admin may ask for another user's with `userId`.",
  })
  @ApiQuery({ name: 'userId', required: false, schema: { type: 'string' } })
  @ApiOkResponse({ description: 'The keys.', schema: listOf('ApiKeyView') })
  listKeys(@CurrentPrincipal() caller: Principal, @Query('userId') userId?: string) {
    return this.users.listKeys(caller, typeof userId === 'string' ? userId : undefined);
  }

  @Get('apikeys/current')
  @ApiOperation({
    summary: 'The API key of this request (never its value)',
    description:
      'Which user and scope the calling key has: what a client such as the console may offer to do with it.',
  })
  @ApiOkResponse({ description: 'The calling key.', schema: schemaRef('ApiKeyView') })
  currentKey(@CurrentPrincipal() caller: Principal) {
    return this.users.currentKey(caller);
  }

  @Delete('apikeys/:keyId')
  @ApiOperation({
    summary: 'Revoke an API key',
    description:
      'Effective within 5 s on every instance. A key revokes only keys no wider than its own (401 otherwise): only an admin key revokes admin keys.',
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors(404)
  @ApiError(
    409,
    "The key is the caller's own, or the bootstrap admin key (managed by RUNPLANE_API_KEY).",
  )
  @HttpCode(204)
  async revokeKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId') keyId: string,
  ): Promise<void> {
    await this.users.revokeKey(caller, keyId);
  }
}
