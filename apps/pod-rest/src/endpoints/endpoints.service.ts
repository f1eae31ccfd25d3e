import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  EndpointCreateDto,
  EndpointUpdateDto,
  ENDPOINT_FIELDS_NOT_USED,
  RunplaneError,
  SchedulerRpc,
  TemplateRpc,
  type Endpoint,
  type Principal,
  type Template,
} from '@runplane/contracts';
import { declaredFields } from '../http/declared-fields.js';
import { EndpointOperationsService } from './endpoint-operations.service.js';

export type EndpointView = Endpoint & { template?: Template };

/**
 * REST v1 endpoints, carried out by the scheduler (which owns endpoints and applies the defaults
 * of the worker protocol) over the bus.
 */
@Injectable()
export class EndpointsService {
  constructor(
    private readonly bus: Bus,
    private readonly operations: EndpointOperationsService,
  ) {}

  create(principal: Principal, body: EndpointCreateDto): Promise<Endpoint> {
    return this.bus.request(SchedulerRpc.createEndpoint, {
      ownerId: principal.userId,
      endpoint: kept(declaredFields(EndpointCreateDto, body)),
    });
  }

  async list(principal: Principal, includeTemplate: boolean): Promise<EndpointView[]> {
    const endpoints = await this.operations.withFailedWorkerLogs(
      principal,
      await this.bus.request(SchedulerRpc.listEndpoints, { ownerId: principal.userId }),
    );
    return includeTemplate ? this.withTemplates(principal, endpoints) : endpoints;
  }

  async get(
    principal: Principal,
    endpointId: string,
    includeTemplate: boolean,
  ): Promise<EndpointView> {
    const [endpoint] = await this.operations.withFailedWorkerLogs(principal, [
      await this.bus.request(SchedulerRpc.getEndpoint, { ownerId: principal.userId, endpointId }),
    ]);
    return includeTemplate ? (await this.withTemplates(principal, [endpoint]))[0] : endpoint;
  }

  update(principal: Principal, endpointId: string, body: EndpointUpdateDto): Promise<Endpoint> {
    const changes = kept(declaredFields(EndpointUpdateDto, body, ['networkVolumeId']));
    return this.bus.request(SchedulerRpc.updateEndpoint, {
      ownerId: principal.userId,
      endpointId,
      changes,
    });
  }

  async delete(principal: Principal, endpointId: string): Promise<void> {
    await this.bus.request(SchedulerRpc.deleteEndpoint, { ownerId: principal.userId, endpointId });
  }

  /** `includeTemplate=true`: each endpoint with its template (left out when the template is gone). */
  private async withTemplates(
    principal: Principal,
    endpoints: Endpoint[],
  ): Promise<EndpointView[]> {
    const ids = [...new Set(endpoints.map((e) => e.templateId))];
    const found = new Map<string, Template>();
    await Promise.all(
      ids.map(async (templateId) => {
        try {
          found.set(
            templateId,
            await this.bus.request(TemplateRpc.get, { ownerId: principal.userId, templateId }),
          );
        } catch (err) {
          if (!(err instanceof RunplaneError && err.status === 404)) throw err;
        }
      }),
    );
    return endpoints.map((e) =>
      found.has(e.templateId) ? { ...e, template: found.get(e.templateId) } : e,
    );
  }
}

/** The fields the scheduler keeps: those of RunPod's that mean nothing here stay behind. */
function kept<T extends EndpointUpdateDto>(fields: T): T {
  const copy = { ...fields };
  for (const name of ENDPOINT_FIELDS_NOT_USED) delete copy[name];
  return copy;
}
