import {
  Args,
  Context,
  Field,
  Float,
  Info,
  Mutation,
  ObjectType,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { GraphqlContext } from '../graphql/graphql-auth.js';
import { Myself, UpdateUserSettingsInput } from '../graphql/graphql.types.js';
import { requiredField, toGraphqlEndpoint } from './endpoint-shape.js';
import { EndpointGql } from './endpoint.types.js';
import { CatalogueClient, EndpointsClient, PodsClient, UsersClient } from './management.clients.js';
import { toGraphqlPod } from './pod-shape.js';
import { NetworkVolumeGql, PodGql } from './pod.types.js';
import { podIncludes } from './selection.js';

@ObjectType('ServerlessDiscount')
export class ServerlessDiscount {
  @Field(() => Float) discountFactor!: number;
  @Field(() => String) type!: string;
  @Field(() => String, { nullable: true }) expirationDate!: string | null;
}

/**
 * `myself` as RunPod's management clients read it (SSH keys, Pods, endpoints, network volumes,
 * spend) and `updateUserSettings`. Billing does not exist here: balances and limits answer 0/null.
 */
@Resolver(() => Myself)
export class AccountResolver {
  constructor(
    private readonly users: UsersClient,
    private readonly podsClient: PodsClient,
    private readonly endpointsClient: EndpointsClient,
    private readonly catalogue: CatalogueClient,
  ) {}

  @Mutation(() => Myself, { nullable: true, description: 'Sets your SSH public keys.' })
  async updateUserSettings(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => UpdateUserSettingsInput, nullable: true })
    input: UpdateUserSettingsInput | null,
  ): Promise<Myself> {
    if (input?.pubKey === undefined || input.pubKey === null) throw requiredField('pubKey');
    const user = await this.users.setPubKey(principal.userId, input.pubKey);
    return { id: user.id };
  }

  @ResolveField(() => String, { description: 'Your SSH public keys, one per line ("" when none).' })
  async pubKey(@Context() { principal }: GraphqlContext): Promise<string> {
    return (await this.users.get(principal.userId)).pubKey;
  }

  @ResolveField(() => String, {
    nullable: true,
    description: 'Always null: users have names here.',
  })
  email(): null {
    return null;
  }

  @ResolveField(() => [PodGql], {
    description: 'Your Pods (serverless workers are under endpoints).',
  })
  async pods(
    @Context() { principal }: GraphqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<PodGql[]> {
    return (await this.podsClient.list(principal, podIncludes(info))).map((p) => toGraphqlPod(p));
  }

  @ResolveField(() => [EndpointGql])
  async endpoints(@Context() { principal }: GraphqlContext): Promise<EndpointGql[]> {
    const [endpoints, gpuTypes] = await Promise.all([
      this.endpointsClient.list(principal.userId),
      this.catalogue.gpuTypes(),
    ]);
    return endpoints.map((e) => toGraphqlEndpoint(e, gpuTypes));
  }

  @ResolveField(() => [NetworkVolumeGql])
  networkVolumes(@Context() { principal }: GraphqlContext): Promise<NetworkVolumeGql[]> {
    return this.catalogue.networkVolumes(principal.userId);
  }

  @ResolveField(() => Float, {
    description: 'What your running Pods and serverless workers cost per hour now.',
  })
  async currentSpendPerHr(@Context() { principal }: GraphqlContext): Promise<number> {
    const pods = await this.podsClient.list(principal, { includeWorkers: true });
    const total = pods
      .filter((p) => p.desiredStatus === 'RUNNING')
      .reduce((sum, p) => sum + p.costPerHr, 0);
    return Math.round(total * 10_000) / 10_000;
  }

  @ResolveField(() => Float, { description: 'Always 0: no billing here.' })
  clientBalance(): number {
    return 0;
  }

  @ResolveField(() => Float, { nullable: true, description: 'Always null: no spend limit here.' })
  spendLimit(): null {
    return null;
  }

  @ResolveField(() => Boolean, { description: 'Always false: no notifications here.' })
  notifyPodsStale(): boolean {
    return false;
  }

  @ResolveField(() => Boolean, { description: 'Always false: no notifications here.' })
  notifyPodsGeneral(): boolean {
    return false;
  }

  @ResolveField(() => Boolean, { description: 'Always false: no notifications here.' })
  notifyLowBalance(): boolean {
    return false;
  }

  @ResolveField(() => ServerlessDiscount, { nullable: true, description: 'Always null.' })
  serverlessDiscount(): null {
    return null;
  }
}
