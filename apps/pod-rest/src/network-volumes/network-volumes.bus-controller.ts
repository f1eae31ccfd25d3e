import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { OwnedRequest, PodApiRpc } from '@runplane/contracts';
import { NetworkVolumesService } from './network-volumes.service.js';

/** GraphQL `myself { networkVolumes }` (template-graphql asks). */
@Controller()
export class NetworkVolumesBusController {
  constructor(private readonly volumes: NetworkVolumesService) {}

  @OnRpc(PodApiRpc.listNetworkVolumes)
  list(@Payload() request: OwnedRequest) {
    return this.volumes.list(request.ownerId);
  }
}
