import { Context, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { TemplatesService } from '../templates/templates.service.js';
import type { GraphqlContext } from './graphql-auth.js';
import { Myself, PodTemplate, Secret } from './graphql.types.js';
import { SecretsClient } from './secrets.client.js';
import { toPodTemplate } from './template-shape.js';

/** `myself { podTemplates {...} secrets {...} }`: what official and third-party clients list. */
@Resolver(() => Myself)
export class MyselfResolver {
  constructor(
    private readonly templates: TemplatesService,
    private readonly vault: SecretsClient,
  ) {}

  @Query(() => Myself)
  myself(@Context() { principal }: GraphqlContext): Myself {
    return { id: principal.userId };
  }

  @ResolveField(() => [PodTemplate])
  async podTemplates(@Context() { principal }: GraphqlContext): Promise<PodTemplate[]> {
    return (await this.templates.list(principal.userId)).map(toPodTemplate);
  }

  @ResolveField(() => [Secret])
  secrets(@Context() { principal }: GraphqlContext): Promise<Secret[]> {
    return this.vault.list(principal.userId);
  }
}
