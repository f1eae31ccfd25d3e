import { Args, Context, Info, Mutation, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { RunplaneError, type EndpointCreateDto, type Template } from '@runplane/contracts';
import type { GraphQLResolveInfo } from 'graphql';
import type { GraphqlContext } from '../graphql/graphql-auth.js';
import { PodTemplate } from '../graphql/graphql.types.js';
import { fromSaveTemplateInput, toPodTemplate } from '../graphql/template-shape.js';
import { TEMPLATE_DEFAULTS, TemplatesService } from '../templates/templates.service.js';
import { fromEndpointInput, requiredField, toGraphqlEndpoint } from './endpoint-shape.js';
import {
  EndpointGql,
  EndpointInput,
  UpdateEndpointTemplateInput,
  type EndpointTemplateInput,
} from './endpoint.types.js';
import { CatalogueClient, EndpointsClient, PodsClient } from './management.clients.js';
import { toGraphqlPod } from './pod-shape.js';
import { NetworkVolumeGql, PodGql } from './pod.types.js';
import { podIncludes } from './selection.js';

/**
 * `saveEndpoint`, `updateEndpointTemplate`, `deleteEndpoint` and the fields of an endpoint:
 * the scheduler's endpoints (the same as REST /v1/endpoints) over the bus.
 */
@Resolver(() => EndpointGql)
export class EndpointsResolver {
  constructor(
    private readonly endpoints: EndpointsClient,
    private readonly catalogue: CatalogueClient,
    private readonly podsClient: PodsClient,
    private readonly templates: TemplatesService,
  ) {}

  /** Without `id` creates (a `template` given inline is created with it), with `id` changes the fields given. */
  @Mutation(() => EndpointGql, { nullable: true })
  async saveEndpoint(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => EndpointInput, nullable: true }) input: EndpointInput | null,
  ): Promise<EndpointGql> {
    if (!input) throw requiredField('input');
    const owner = principal.userId;
    const gpuTypes = await this.catalogue.gpuTypes();
    const mode = input.id ? 'modify' : 'create';
    const dto: EndpointCreateDto = fromEndpointInput(input, gpuTypes, mode);
    if (mode === 'create' && !dto.templateId && !input.template) throw requiredField('templateId');
    const created =
      input.template && !dto.templateId ? await this.inlineTemplate(owner, input.template) : null;
    if (created) dto.templateId = created.id;
    try {
      const endpoint = input.id
        ? await this.endpoints.update(owner, input.id, dto)
        : await this.endpoints.create(owner, dto);
      return toGraphqlEndpoint(endpoint, gpuTypes);
    } catch (err) {
      // The template was made for this endpoint only: it goes with the failed save.
      if (created) await this.templates.delete(owner, created.id).catch(() => undefined);
      throw err;
    }
  }

  @Mutation(() => EndpointGql, {
    nullable: true,
    description: 'Moves the endpoint to another template.',
  })
  async updateEndpointTemplate(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => UpdateEndpointTemplateInput, nullable: true })
    input: UpdateEndpointTemplateInput | null,
  ): Promise<EndpointGql> {
    if (!input?.endpointId) throw requiredField('endpointId');
    if (!input.templateId) throw requiredField('templateId');
    const [endpoint, gpuTypes] = await Promise.all([
      this.endpoints.update(principal.userId, input.endpointId, { templateId: input.templateId }),
      this.catalogue.gpuTypes(),
    ]);
    return toGraphqlEndpoint(endpoint, gpuTypes);
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'Deletes the endpoint (its queued jobs and workers go); always null.',
  })
  async deleteEndpoint(
    @Context() { principal }: GraphqlContext,
    @Args('id', { type: () => String, nullable: true }) id: string | null,
  ): Promise<null> {
    if (!id) throw requiredField('id');
    await this.endpoints.delete(principal.userId, id);
    return null;
  }

  @ResolveField(() => PodTemplate, { nullable: true })
  async template(
    @Context() { principal }: GraphqlContext,
    @Parent() endpoint: EndpointGql,
  ): Promise<PodTemplate | null> {
    try {
      return toPodTemplate(await this.templates.get(principal.userId, endpoint.templateId));
    } catch (err) {
      if (err instanceof RunplaneError && err.status === 404) return null;
      throw err;
    }
  }

  @ResolveField(() => NetworkVolumeGql, { nullable: true })
  async networkVolume(
    @Context() { principal }: GraphqlContext,
    @Parent() endpoint: EndpointGql,
  ): Promise<NetworkVolumeGql | null> {
    if (!endpoint.networkVolumeId) return null;
    const volumes = await this.catalogue.networkVolumes(principal.userId);
    return volumes.find((v) => v.id === endpoint.networkVolumeId) ?? null;
  }

  @ResolveField(() => [PodGql], { description: 'Its serverless workers.' })
  async pods(
    @Context() { principal }: GraphqlContext,
    @Parent() endpoint: EndpointGql,
    @Info() info: GraphQLResolveInfo,
  ): Promise<PodGql[]> {
    const pods = await this.podsClient.list(principal, {
      endpointId: endpoint.id,
      includeWorkers: true,
      ...podIncludes(info),
    });
    return pods.map((p) => toGraphqlPod(p));
  }

  /** The serverless template of `saveEndpoint(input: {template: {...}})`, checked like saveTemplate. */
  private inlineTemplate(ownerId: string, t: EndpointTemplateInput): Promise<Template> {
    const dto = fromSaveTemplateInput(
      {
        ...t,
        containerDiskInGb: t.containerDiskInGb ?? TEMPLATE_DEFAULTS.containerDiskInGb,
        volumeInGb: 0,
        isServerless: true,
      },
      'create',
    );
    return this.templates.create(ownerId, dto);
  }
}
