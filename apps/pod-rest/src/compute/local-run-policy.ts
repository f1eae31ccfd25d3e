import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { RunplaneError, UserRpc } from '@runplane/contracts';
import { PodRestSettings } from '../settings.js';
import { ComputeProvider } from './compute-provider.js';

/**
 * Who may run commands on this host. The local provider runs a workload as a process here: even
 * as its own user it shares the kernel, the network and what the host lets every user read, so
 * running commands is the operator's decision — users holding an admin key, plus those the
 * operator names in RUNPLANE_LOCAL_RUN_USERS (or `all`). Containers and Kubernetes are not limited.
 */
@Injectable()
export class LocalRunPolicy {
  constructor(
    private readonly compute: ComputeProvider,
    private readonly settings: PodRestSettings,
    private readonly bus: Bus,
  ) {}

  async assertMayRun(ownerId: string): Promise<void> {
    if (this.compute.kind !== 'local') return;
    const allowed = this.settings.localRunUsers;
    if (allowed.all || allowed.userIds.includes(ownerId)) return;
    const user = await this.bus.request(UserRpc.get, { userId: ownerId });
    if (user.isAdmin) return;
    throw new RunplaneError(
      403,
      'this server runs workloads as processes on its own host (the local compute provider), which only users with an admin key may do; ' +
        'ask the operator to allow you (RUNPLANE_LOCAL_RUN_USERS) or to use the docker or Kubernetes provider',
      [{ path: 'ownerId', message: 'may not run commands on this host' }],
      'LOCAL_COMMANDS_NOT_ALLOWED',
    );
  }
}
