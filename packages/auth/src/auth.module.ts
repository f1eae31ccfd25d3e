import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyVerifier } from './key-verifier.js';

/** Authentication for every HTTP route of the process (needs a global Bus provider). */
@Global()
@Module({
  providers: [ApiKeyVerifier, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeyVerifier],
})
export class AuthModule {}
