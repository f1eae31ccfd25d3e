import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  CreatePodRequest,
  GetPodRequest,
  ListPodsRequest,
  PodApiRpc,
  PodScopedRequest,
} from '@runplane/contracts';
import { PodsService } from './pods.service.js';

/**
 * The Pod operations of `/v1/pods` for the other door to them, GraphQL (template-graphql asks):
 * the same service, the same rules, the caller's principal carried along.
 */
@Controller()
export class PodsBusController {
  constructor(private readonly pods: PodsService) {}

  @OnRpc(PodApiRpc.createPod)
  create(@Payload() request: CreatePodRequest) {
    return this.pods.create(request.principal, request.pod);
  }

  @OnRpc(PodApiRpc.listPods)
  list(@Payload() { principal, endpointId, ...include }: ListPodsRequest) {
    const filter = { includeWorkers: include.includeWorkers ?? false, endpointId };
    return this.pods.list(principal, filter, include);
  }

  @OnRpc(PodApiRpc.getPod)
  get(@Payload() { principal, podId, ...include }: GetPodRequest) {
    return this.pods.get(principal, podId, include);
  }

  @OnRpc(PodApiRpc.startPod)
  start(@Payload() request: PodScopedRequest) {
    return this.pods.start(request.principal, request.podId);
  }

  @OnRpc(PodApiRpc.stopPod)
  stop(@Payload() request: PodScopedRequest) {
    return this.pods.stop(request.principal, request.podId);
  }

  @OnRpc(PodApiRpc.deletePod)
  async delete(@Payload() request: PodScopedRequest) {
    await this.pods.delete(request.principal, request.podId);
    return { ok: true as const };
  }
}
