import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule } from '@nestjs/graphql';
import { ApiKeyVerifier, AuthThrottle } from '@runplane/auth';
import { LOGGER, RunplaneConfig, type Logger } from '@runplane/platform';
import { graphqlLimits } from '../settings.js';
import { assertWithinLimits } from './document-limits.js';
import { authenticate, writeAccessPlugin } from './graphql-auth.js';
import { formatGraphqlError } from './graphql-errors.js';

/**
 * `POST /graphql` (Apollo Server on the Fastify instance every service shares; in cluster mode
 * template-graphql's own port, routed by the ingress). Code-first schema built in memory at start.
 */
export const GraphqlApiModule = GraphQLModule.forRootAsync<ApolloDriverConfig>({
  driver: ApolloDriver,
  inject: [ApiKeyVerifier, AuthThrottle, LOGGER, RunplaneConfig],
  useFactory: (
    verifier: ApiKeyVerifier,
    throttle: AuthThrottle,
    logger: Logger,
    config: RunplaneConfig,
  ): ApolloDriverConfig => {
    const limits = graphqlLimits(config);
    return {
      path: '/graphql',
      autoSchemaFile: true,
      sortSchema: true,
      // A landing page would load its UI from a CDN; clients only POST.
      graphiql: false,
      introspection: true,
      includeStacktraceInErrorResponses: false,
      parseOptions: { maxTokens: limits.tokens },
      // Who calls, then whether the document is within the limits: both before Apollo parses it.
      context: async (request: Parameters<typeof authenticate>[2] & { body?: unknown }) => {
        const context = await authenticate(verifier, throttle, request);
        assertWithinLimits(request, limits);
        return context;
      },
      formatError: formatGraphqlError(logger),
      plugins: [writeAccessPlugin],
    };
  },
});
