import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { PodRpc, StartWorkerRequest, StopWorkerRequest } from '@runplane/contracts';
import { WorkersService } from './workers.service.js';

/** Worker lifecycle as the scheduler drives it over the bus. */
@Controller()
export class WorkersBusController {
  constructor(private readonly workers: WorkersService) {}

  @OnRpc(PodRpc.startWorker)
  start(@Payload() request: StartWorkerRequest) {
    return this.workers.startWorker(request);
  }

  @OnRpc(PodRpc.stopWorker)
  stop(@Payload() request: StopWorkerRequest) {
    return this.workers.stopWorker(request);
  }
}
