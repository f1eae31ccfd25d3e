import { Field, Float, ID, InputType, Int, ObjectType } from '@nestjs/graphql';

// The GraphQL shapes RunPod clients use (templates, secrets and the management operations).
// Every argument and input field is nullable (clients declare variables as
// both `T` and `T!`); required-ness is checked by the resolvers, which answer BAD_USER_INPUT.

@ObjectType('EnvironmentVariable')
export class EnvironmentVariable {
  @Field(() => String) key!: string;
  @Field(() => String) value!: string;
}

@InputType('EnvironmentVariableInput')
export class EnvironmentVariableInput {
  @Field(() => String, { nullable: true }) key?: string | null;
  @Field(() => String, { nullable: true }) value?: string | null;
}

@ObjectType('PortConfig', { description: 'The label of an exposed port.' })
export class PortConfig {
  @Field(() => String, { description: 'The port number, e.g. "8888".' }) port!: string;
  @Field(() => String, { description: 'Its label, e.g. "Jupyter".' }) name!: string;
}

@InputType('PortConfigInput')
export class PortConfigInput {
  @Field(() => String, { nullable: true }) port?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
}

@ObjectType('PodTemplate', {
  description:
    'A template: what a Pod or serverless worker runs. The same template as REST /v1/templates.',
})
export class PodTemplate {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) imageName!: string;
  @Field(() => String, {
    description:
      'The start command as one string (REST dockerStartCmd, shell-quoted); "" uses the image\'s CMD.',
  })
  dockerArgs!: string;
  @Field(() => Int) containerDiskInGb!: number;
  @Field(() => Int) volumeInGb!: number;
  @Field(() => String) volumeMountPath!: string;
  @Field(() => String, {
    description: 'Comma-separated "<port>/<http|tcp>" items, e.g. "8888/http,22/tcp".',
  })
  ports!: string;
  @Field(() => [PortConfig], { description: 'Labels of some of its ports.' })
  portsConfig!: PortConfig[];
  @Field(() => [EnvironmentVariable], {
    description: 'Values may reference secrets as {{ RUNPOD_SECRET_<name> }}; shown as written.',
  })
  env!: EnvironmentVariable[];
  @Field(() => String) readme!: string;
  @Field(() => Boolean) isServerless!: boolean;
  @Field(() => Boolean) isPublic!: boolean;
  @Field(() => Boolean) isRunpod!: boolean;
  @Field(() => String) category!: string;
  @Field(() => String, { nullable: true }) containerRegistryAuthId!: string | null;
  @Field(() => Float) earned!: number;
  @Field(() => Int) runtimeInMin!: number;
  @Field(() => Boolean, {
    description: 'Accepted for compatibility; Runplane starts no Jupyter server.',
  })
  startJupyter!: boolean;
  @Field(() => Boolean, {
    description: 'Accepted for compatibility; Runplane starts no SSH server.',
  })
  startSsh!: boolean;
  @Field(() => String, {
    description: 'Accepted, not recorded: "" (dockerArgs is the start command).',
  })
  startScript!: string;
  @Field(() => Boolean, { description: 'Accepted, not recorded: false.' })
  advancedStart!: boolean;
  @Field(() => String, { nullable: true, description: 'Always null.' })
  boundEndpointId!: string | null;
}

@InputType('SaveTemplateInput', {
  description:
    'Without `id` creates a template, with `id` modifies it. Required: name, imageName, containerDiskInGb, volumeInGb.',
})
export class SaveTemplateInput {
  @Field(() => String, { nullable: true }) id?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) imageName?: string | null;
  @Field(() => Int, { nullable: true }) containerDiskInGb?: number | null;
  @Field(() => Int, { nullable: true, description: '0 for a serverless template.' }) volumeInGb?:
    number | null;
  @Field(() => String, { nullable: true }) volumeMountPath?: string | null;
  @Field(() => String, { nullable: true }) dockerArgs?: string | null;
  @Field(() => String, { nullable: true }) ports?: string | null;
  @Field(() => [EnvironmentVariableInput], { nullable: 'itemsAndList' })
  env?: Array<EnvironmentVariableInput | null> | null;
  @Field(() => String, { nullable: true }) readme?: string | null;
  @Field(() => Boolean, { nullable: true }) isServerless?: boolean | null;
  @Field(() => Boolean, { nullable: true }) isPublic?: boolean | null;
  @Field(() => String, {
    nullable: true,
    description: 'Saved registry credentials for a private image; "" for none.',
  })
  containerRegistryAuthId?: string | null;
  @Field(() => String, { nullable: true, description: 'NVIDIA, AMD or CPU (create only).' })
  category?: string | null;
  @Field(() => Boolean, { nullable: true }) startJupyter?: boolean | null;
  @Field(() => Boolean, { nullable: true }) startSsh?: boolean | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) startScript?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'No effect.' }) advancedStart?:
    boolean | null;
  @Field(() => [PortConfigInput], {
    nullable: 'itemsAndList',
    description:
      'Labels of exposed ports (replaces the labels); a port the template does not expose is refused.',
  })
  portsConfig?: Array<PortConfigInput | null> | null;
}

@InputType('PodTemplateInput')
export class PodTemplateInput {
  @Field(() => Boolean, {
    nullable: true,
    description:
      'true: official templates (Runplane has none); false: community templates (public ones of other users); absent: yours.',
  })
  isRunpod?: boolean | null;
}

@ObjectType('Secret', { description: 'A secret; its value is never returned.' })
export class Secret {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { description: 'ISO timestamp.' }) createdAt!: string;
  @Field(() => String, { description: 'ISO timestamp.' }) updatedAt!: string;
}

@InputType('SecretCreateInput')
export class SecretCreateInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) value?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
}

@ObjectType('User', { description: 'The caller (`myself`).' })
export class Myself {
  @Field(() => String) id!: string;
}

@InputType('UpdateUserSettingsInput')
export class UpdateUserSettingsInput {
  @Field(() => String, {
    nullable: true,
    description: 'SSH public keys, one per line (replaces them; "" removes them).',
  })
  pubKey?: string | null;
}
