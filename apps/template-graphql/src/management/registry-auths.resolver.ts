import {
  Args,
  Context,
  Field,
  ID,
  InputType,
  Mutation,
  ObjectType,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import {
  ContainerRegistryAuthCreateDto,
  ContainerRegistryCredentialsDto,
  type ContainerRegistryAuth,
} from '@runplane/contracts';
import type { GraphqlContext } from '../graphql/graphql-auth.js';
import { Myself } from '../graphql/graphql.types.js';
import { validatedInput } from '../graphql/validate-input.js';
import { requiredField } from './endpoint-shape.js';
import { RegistryAuthsClient } from './management.clients.js';

@ObjectType('ContainerRegistryAuth', {
  description:
    'Credentials for a private container registry; the username and password are never returned.',
})
export class RegistryAuthGql {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
}

@InputType('SaveRegistryAuthInput')
export class SaveRegistryAuthInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) username?: string | null;
  @Field(() => String, { nullable: true }) password?: string | null;
}

@InputType('UpdateRegistryAuthInput')
export class UpdateRegistryAuthInput {
  @Field(() => String, { nullable: true }) id?: string | null;
  @Field(() => String, { nullable: true }) username?: string | null;
  @Field(() => String, { nullable: true }) password?: string | null;
}

/**
 * Container registry auths as runpod-python (`create_container_registry_auth`, …) and runpodctl
 * (`registry`) use them; they belong to secrets-vault, as REST `/v1/containerregistryauth` does.
 */
@Resolver(() => Myself)
export class RegistryAuthsResolver {
  constructor(private readonly auths: RegistryAuthsClient) {}

  @Mutation(() => RegistryAuthGql, { nullable: true })
  saveRegistryAuth(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => SaveRegistryAuthInput, nullable: true })
    input: SaveRegistryAuthInput | null,
  ): Promise<ContainerRegistryAuth> {
    const auth = validatedInput(ContainerRegistryAuthCreateDto, { ...input });
    return this.auths.create(principal.userId, auth);
  }

  @Mutation(() => RegistryAuthGql, {
    nullable: true,
    description: 'New username and password for the auth `id`; its name stays.',
  })
  updateRegistryAuth(
    @Context() { principal }: GraphqlContext,
    @Args('input', { type: () => UpdateRegistryAuthInput, nullable: true })
    input: UpdateRegistryAuthInput | null,
  ): Promise<ContainerRegistryAuth> {
    if (!input?.id) throw requiredField('id');
    const credentials = validatedInput(ContainerRegistryCredentialsDto, {
      username: input.username,
      password: input.password,
    });
    return this.auths.update(principal.userId, input.id, credentials);
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'True once deleted; failures are errors.',
  })
  async deleteRegistryAuth(
    @Context() { principal }: GraphqlContext,
    @Args('registryAuthId', { type: () => String, nullable: true }) registryAuthId: string | null,
  ): Promise<boolean> {
    if (!registryAuthId) throw requiredField('registryAuthId');
    await this.auths.delete(principal.userId, registryAuthId);
    return true;
  }

  @ResolveField(() => [RegistryAuthGql], { description: 'Your container registry auths.' })
  containerRegistryCreds(
    @Context() { principal }: GraphqlContext,
  ): Promise<ContainerRegistryAuth[]> {
    return this.auths.list(principal.userId);
  }
}
