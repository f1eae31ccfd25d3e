import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { defineRpc } from './definitions.js';

/** The most characters of `pubKey` (SSH public keys, one per line). */
export const MAX_PUB_KEY_LENGTH = 65_536;

export class UserScopedRequest {
  @IsString() @IsNotEmpty() userId!: string;
}

export class UpdateUserSettingsRequest extends UserScopedRequest {
  /** The user's SSH public keys (RunPod's `pubKey`: authorized_keys lines); "" removes them. */
  @IsString() @MaxLength(MAX_PUB_KEY_LENGTH) pubKey!: string;
}

/** A user and the settings they change themselves (GraphQL `myself`, `updateUserSettings`). */
export interface UserSettings {
  id: string;
  name: string;
  pubKey: string;
  createdAt: string;
  /** The user holds a live admin key: the operator trusts them (e.g. to run commands on the host). */
  isAdmin: boolean;
}

/** Requests answered by secrets-vault, which owns users. */
export const UserRpc = {
  /** Unknown user: 404. */
  get: defineRpc<UserScopedRequest, UserSettings>('secrets-vault', 'users.get', UserScopedRequest),
  updateSettings: defineRpc<UpdateUserSettingsRequest, UserSettings>(
    'secrets-vault',
    'users.update-settings',
    UpdateUserSettingsRequest,
  ),
} as const;
