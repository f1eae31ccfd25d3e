import { Args, Context, Mutation, Query, Resolver } from '@nestjs/graphql';
import { RunplaneError } from '@runplane/contracts';
import { TemplatesService } from '../templates/templates.service.js';
import type { GraphqlContext } from './graphql-auth.js';
import { PodTemplate, PodTemplateInput, SaveTemplateInput } from './graphql.types.js';
import { fromSaveTemplateInput, toPodTemplate } from './template-shape.js';

const required = (name: string) =>
  RunplaneError.badRequest(`${name} is required`, [{ path: name, message: `${name} is required` }]);

/** saveTemplate, deleteTemplate, podTemplate, podTemplates as RunPod's GraphQL API names them. */
@Resolver(() => PodTemplate)
export class TemplatesResolver {
  constructor(private readonly templates: TemplatesService) {}

  /** Without `id` creates (name unique: CONFLICT otherwise); with `id` modifies the fields given. */
  @Mutation(() => PodTemplate, { nullable: true })
  async saveTemplate(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => SaveTemplateInput, nullable: true })
    input?: SaveTemplateInput | null,
  ): Promise<PodTemplate> {
    const owner = principal.userId;
    if (!input?.id)
      return toPodTemplate(
        await this.templates.create(owner, fromSaveTemplateInput(input, 'create')),
      );
    const current = await this.templates.getOwned(owner, input.id);
    const fields = fromSaveTemplateInput(input, 'modify');
    if (
      input.isServerless !== undefined &&
      input.isServerless !== null &&
      input.isServerless !== current.isServerless
    ) {
      throw RunplaneError.badRequest(
        `isServerless cannot change (template "${current.name}" is ${current.isServerless ? '' : 'not '}serverless): create a new template instead`,
        [{ path: 'isServerless', message: 'cannot change' }],
      );
    }
    return toPodTemplate(await this.templates.update(owner, input.id, fields));
  }

  /** Deletes the caller's template of that name; null on success. Refused (CONFLICT) while in use or just used. */
  @Mutation(() => Boolean, { nullable: true, description: 'Always null; failures are errors.' })
  async deleteTemplate(
    @Context() { principal }: GraphqlContext,
    @Args('templateName', { type: () => String, nullable: true }) templateName?: string | null,
  ): Promise<null> {
    if (!templateName) throw required('templateName');
    await this.templates.deleteByName(principal.userId, templateName);
    return null;
  }

  @Query(() => PodTemplate, {
    nullable: true,
    description: 'One of your templates, or a public one.',
  })
  async podTemplate(
    @Context() { principal }: GraphqlContext,
    @Args('id', { type: () => String, nullable: true }) id?: string | null,
  ): Promise<PodTemplate> {
    if (!id) throw required('id');
    return toPodTemplate(await this.templates.get(principal.userId, id));
  }

  /**
   * Each template in one list only, so that clients adding up official, community and their own
   * templates (runpodctl `template list --all`) list none twice.
   */
  @Query(() => [PodTemplate], {
    description:
      'Without input: your templates. isRunpod true: official templates (Runplane has none); false: community templates (public templates of other users).',
  })
  async podTemplates(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => PodTemplateInput, nullable: true })
    input?: PodTemplateInput | null,
  ): Promise<PodTemplate[]> {
    if (input?.isRunpod === true) return [];
    const templates =
      input?.isRunpod === false
        ? await this.templates.listCommunity(principal.userId)
        : await this.templates.list(principal.userId);
    return templates.map(toPodTemplate);
  }
}
