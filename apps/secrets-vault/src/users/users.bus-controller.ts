import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { UpdateUserSettingsRequest, UserRpc, UserScopedRequest } from '@runplane/contracts';
import { UsersService } from './users.service.js';

/** The caller's user as template-graphql's `myself` and `updateUserSettings` read and change it. */
@Controller()
export class UsersBusController {
  constructor(private readonly users: UsersService) {}

  @OnRpc(UserRpc.get)
  get(@Payload() request: UserScopedRequest) {
    return this.users.get(request.userId);
  }

  @OnRpc(UserRpc.updateSettings)
  updateSettings(@Payload() request: UpdateUserSettingsRequest) {
    return this.users.setPubKey(request.userId, request.pubKey);
  }
}
