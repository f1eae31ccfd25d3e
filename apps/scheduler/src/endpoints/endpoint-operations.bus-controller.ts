import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  EndpointMetricsRequest,
  EndpointOperationsRpc,
  EndpointScopedRequest,
} from '@runplane/contracts';
import { EndpointOperationsService } from './endpoint-operations.service.js';

/** An endpoint's workers and metrics, as pod-rest's `/v1/endpoints/{id}/workers` and `/metrics` ask. */
@Controller()
export class EndpointOperationsBusController {
  constructor(private readonly operations: EndpointOperationsService) {}

  @OnRpc(EndpointOperationsRpc.workers)
  workers(@Payload() request: EndpointScopedRequest) {
    return this.operations.workers(request);
  }

  @OnRpc(EndpointOperationsRpc.metrics)
  metrics(@Payload() request: EndpointMetricsRequest) {
    return this.operations.metrics(request);
  }
}
