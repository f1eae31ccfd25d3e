import type {
  ApiKeyView,
  CreateApiKeyDto,
  CreatedApiKey,
  CreateUserDto,
  User,
} from '../auth/apikey.dto.js';
import { HttpCaller, type ClientOptions } from './http.js';

/** `/v1/apikeys`: the caller's keys (an admin: everybody's). A created key's value is returned only once. */
export class ApiKeysClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  create(request: CreateApiKeyDto): Promise<CreatedApiKey> {
    return this.http.call('POST', '/v1/apikeys', request);
  }

  list(options: { userId?: string } = {}): Promise<ApiKeyView[]> {
    return this.http.call(
      'GET',
      `/v1/apikeys${options.userId ? `?userId=${encodeURIComponent(options.userId)}` : ''}`,
    );
  }

  /** The key this client calls with (its user and scope). */
  current(): Promise<ApiKeyView> {
    return this.http.call('GET', '/v1/apikeys/current');
  }

  async revoke(keyId: string): Promise<void> {
    await this.http.call('DELETE', `/v1/apikeys/${encodeURIComponent(keyId)}`);
  }
}

/** `/v1/users` (admin keys only). */
export class UsersClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  create(request: CreateUserDto): Promise<User> {
    return this.http.call('POST', '/v1/users', request);
  }

  list(): Promise<User[]> {
    return this.http.call('GET', '/v1/users');
  }
}
