import {
  Args,
  Context,
  Info,
  Mutation,
  Parent,
  Query,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { GraphqlContext } from '../graphql/graphql-auth.js';
import { requiredField } from './endpoint-shape.js';
import { PodsClient } from './management.clients.js';
import { fromDeployInput, toGraphqlPod } from './pod-shape.js';
import {
  DeployCpuPodInput,
  NetworkVolumeGql,
  PodBidResumeInput,
  PodFilter,
  PodFindAndDeployOnDemandInput,
  PodGql,
  PodMachineInfo,
  PodResumeInput,
  PodStopInput,
  PodTerminateInput,
} from './pod.types.js';
import { podIncludes } from './selection.js';

const podId = (input: { podId?: string | null } | null | undefined): string => {
  if (!input?.podId) throw requiredField('podId');
  return input.podId;
};

/**
 * `pod` and the Pod mutations of RunPod's GraphQL API, carried out by pod-rest's Pod service (the
 * same one as REST /v1/pods) over the bus.
 */
@Resolver(() => PodGql)
export class PodsResolver {
  constructor(private readonly pods: PodsClient) {}

  @Query(() => PodGql, {
    nullable: true,
    description: 'One of your Pods (serverless workers too).',
  })
  async pod(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodFilter, nullable: true }) input: PodFilter | null,
    @Info() info: GraphQLResolveInfo,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.get(principal, podId(input), podIncludes(info)));
  }

  @Mutation(() => PodGql, { nullable: true, description: 'Creates and starts a GPU Pod.' })
  async podFindAndDeployOnDemand(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodFindAndDeployOnDemandInput, nullable: true })
    input: PodFindAndDeployOnDemandInput | null,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.create(principal, fromDeployInput(input, 'gpu')));
  }

  @Mutation(() => PodGql, { nullable: true, description: 'Creates and starts a CPU Pod.' })
  async deployCpuPod(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => DeployCpuPodInput, nullable: true })
    input: DeployCpuPodInput | null,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.create(principal, fromDeployInput(input, 'cpu')));
  }

  @Mutation(() => PodGql, { nullable: true, description: 'Stops the Pod (its volume is kept).' })
  async podStop(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodStopInput, nullable: true }) input: PodStopInput | null,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.stop(principal, podId(input)));
  }

  @Mutation(() => PodGql, { nullable: true, description: 'Starts a stopped Pod.' })
  async podResume(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodResumeInput, nullable: true }) input: PodResumeInput | null,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.start(principal, podId(input)));
  }

  @Mutation(() => PodGql, {
    nullable: true,
    description: 'Starts a stopped Pod (no bidding here: like podResume).',
  })
  async podBidResume(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodBidResumeInput, nullable: true })
    input: PodBidResumeInput | null,
  ): Promise<PodGql> {
    return toGraphqlPod(await this.pods.start(principal, podId(input)));
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'Terminates and deletes the Pod; always null, failures are errors.',
  })
  async podTerminate(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodTerminateInput, nullable: true })
    input: PodTerminateInput | null,
  ): Promise<null> {
    await this.pods.delete(principal, podId(input));
    return null;
  }

  /** Asked for separately when the answer that produced the Pod did not include it (mutations). */
  @ResolveField(() => PodMachineInfo, { nullable: true })
  async machine(
    @Context() { principal }: GraphqlContext,
    @Parent() pod: PodGql,
  ): Promise<PodMachineInfo | null> {
    if (pod.machine !== undefined) return pod.machine;
    const full = await this.pods.get(principal, pod.id, { includeMachine: true });
    return toGraphqlPod(full).machine ?? null;
  }

  @ResolveField(() => NetworkVolumeGql, { nullable: true })
  async networkVolume(
    @Context() { principal }: GraphqlContext,
    @Parent() pod: PodGql,
  ): Promise<NetworkVolumeGql | null> {
    if (pod.networkVolume !== undefined || !pod.networkVolumeId) return pod.networkVolume ?? null;
    const full = await this.pods.get(principal, pod.id, { includeNetworkVolume: true });
    return toGraphqlPod(full).networkVolume ?? null;
  }
}
