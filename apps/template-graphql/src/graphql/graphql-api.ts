import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule } from '@nestjs/graphql';
import { ApiKeyVerifier, AuthThrottle } from '@runplane/auth';
import { LOGGER, type Logger } from '@runplane/platform';
import { authenticate, writeAccessPlugin } from './graphql-auth.js';
import { formatGraphqlError } from './graphql-errors.js';

/**
 * `POST /graphql` (Apollo Server on the Fastify instance every service shares; in cluster mode
 * template-graphql's own port, routed by the ingress). Code-first schema built in memory at start.
 */
export const GraphqlApiModule = GraphQLModule.forRootAsync<ApolloDriverConfig>({
  driver: ApolloDriver,
  inject: [ApiKeyVerifier, AuthThrottle, LOGGER],
  useFactory: (
    verifier: ApiKeyVerifier,
    throttle: AuthThrottle,
    logger: Logger,
  ): ApolloDriverConfig => ({
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    // A landing page would load its UI from a CDN; clients only POST.
    graphiql: false,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    context: (request: Parameters<typeof authenticate>[2]) =>
      authenticate(verifier, throttle, request),
    formatError: formatGraphqlError(logger),
    plugins: [writeAccessPlugin],
  }),
});
