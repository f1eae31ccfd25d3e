import { Args, Context, ID, Mutation, Resolver } from '@nestjs/graphql';
import { RunplaneError, SecretCreateDto } from '@runplane/contracts';
import type { GraphqlContext } from './graphql-auth.js';
import { Secret, SecretCreateInput } from './graphql.types.js';
import { SecretsClient } from './secrets.client.js';
import { validatedInput } from './validate-input.js';

/** secretCreate and secretDelete. The value goes to secrets-vault and never comes back. */
@Resolver(() => Secret)
export class SecretsResolver {
  constructor(private readonly secrets: SecretsClient) {}

  @Mutation(() => Secret, { nullable: true })
  async secretCreate(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => SecretCreateInput, nullable: true })
    input?: SecretCreateInput | null,
  ): Promise<Secret> {
    const dto = validatedInput(SecretCreateDto, {
      name: input?.name,
      value: input?.value,
      description: input?.description,
    });
    return this.secrets.create(principal.userId, dto);
  }

  /** `id` is an `ID` (clients declare `$id: ID!`); null on success, NOT_FOUND for an unknown one. */
  @Mutation(() => Boolean, { nullable: true, description: 'Always null; failures are errors.' })
  async secretDelete(
    @Context() { principal }: GraphqlContext,
    @Args('id', { type: () => ID, nullable: true }) id?: string | null,
  ): Promise<null> {
    if (!id)
      throw RunplaneError.badRequest('id is required', [{ path: 'id', message: 'id is required' }]);
    await this.secrets.delete(principal.userId, id);
    return null;
  }
}
