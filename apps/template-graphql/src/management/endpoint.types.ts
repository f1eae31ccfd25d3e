import { Field, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import {
  EnvironmentVariable,
  EnvironmentVariableInput,
  PodTemplate,
} from '../graphql/graphql.types.js';
import { NetworkVolumeGql, PodGql } from './pod.types.js';

// Serverless endpoints as RunPod's GraphQL API shows them (`saveEndpoint`, `myself { endpoints }`):
// the same endpoints as REST /v1/endpoints, in GraphQL's shape (gpuIds and locations are
// comma-separated strings, env a {key, value} list).

export enum FlashBootType {
  FLASHBOOT = 'FLASHBOOT',
  OFF = 'OFF',
}
registerEnumType(FlashBootType, {
  name: 'FlashBootType',
  description: 'Accepted; Runplane has no FlashBoot, so endpoints answer OFF.',
});

@ObjectType('EndpointNetworkVolume')
export class EndpointNetworkVolume {
  @Field(() => String) networkVolumeId!: string;
  @Field(() => String, { nullable: true }) dataCenterId!: string | null;
}

@ObjectType('Endpoint', {
  description: 'A serverless endpoint: the same endpoint as REST /v1/endpoints/{id}.',
})
export class EndpointGql {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) templateId!: string;
  @Field(() => PodTemplate, { nullable: true, description: 'Null when the template is gone.' })
  template?: PodTemplate | null;
  @Field(() => String, {
    description:
      'Comma-separated GPU pools (when every GPU type of a pool is allowed) and GPU type ids.',
  })
  gpuIds!: string;
  @Field(() => Int) gpuCount!: number;
  @Field(() => [String], { description: 'CPU endpoints: "<flavor>-<vcpus>" items.' })
  instanceIds!: string[];
  @Field(() => String, { description: 'GPU or CPU.' }) computeType!: string;
  @Field(() => String, { description: 'QB: queue-based (the only type here).' }) type!: string;
  @Field(() => String) userId!: string;
  @Field(() => Int) version!: number;
  @Field(() => Int) workersMin!: number;
  @Field(() => Int) workersMax!: number;
  @Field(() => Int, { description: 'Always 0.' }) workersStandby!: number;
  @Field(() => Int) idleTimeout!: number;
  @Field(() => String) scalerType!: string;
  @Field(() => Int) scalerValue!: number;
  @Field(() => Int) executionTimeoutMs!: number;
  @Field(() => String, { description: 'Comma-separated data center ids ("" for any).' })
  locations!: string;
  @Field(() => String, { nullable: true }) networkVolumeId!: string | null;
  @Field(() => [EndpointNetworkVolume]) networkVolumeIds!: EndpointNetworkVolume[];
  @Field(() => NetworkVolumeGql, { nullable: true }) networkVolume?: NetworkVolumeGql | null;
  @Field(() => FlashBootType) flashBootType!: FlashBootType;
  @Field(() => String, { description: 'Accepted, not recorded: "".' }) allowedCudaVersions!: string;
  @Field(() => String, { nullable: true, description: 'Accepted, not recorded: null.' })
  minCudaVersion!: string | null;
  @Field(() => [String], { description: 'Accepted, not recorded: [].' }) modelReferences!: string[];
  @Field(() => String, { nullable: true, description: 'Always null (use an API key).' })
  aiKey!: string | null;
  @Field(() => [EnvironmentVariable]) env!: EnvironmentVariable[];
  @Field(() => String) createdAt!: string;
  @Field(() => [PodGql], { description: 'Its serverless workers.' }) pods?: PodGql[];
}

@InputType('NetworkVolumeIdInput')
export class NetworkVolumeIdInput {
  @Field(() => String, { nullable: true }) networkVolumeId?: string | null;
  @Field(() => String, { nullable: true }) dataCenterId?: string | null;
}

@InputType('EndpointTemplateInput', {
  description: 'A serverless template created with the endpoint.',
})
export class EndpointTemplateInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) imageName?: string | null;
  @Field(() => Int, { nullable: true }) containerDiskInGb?: number | null;
  @Field(() => String, { nullable: true }) dockerArgs?: string | null;
  @Field(() => [EnvironmentVariableInput], { nullable: 'itemsAndList' })
  env?: Array<EnvironmentVariableInput | null> | null;
  @Field(() => String, { nullable: true }) ports?: string | null;
  @Field(() => String, { nullable: true }) readme?: string | null;
  @Field(() => String, { nullable: true }) containerRegistryAuthId?: string | null;
  @Field(() => String, { nullable: true }) volumeMountPath?: string | null;
}

@InputType('EndpointInput', {
  description:
    'Without `id` creates an endpoint (templateId or template required), with `id` changes the fields given.',
})
export class EndpointInput {
  @Field(() => String, { nullable: true }) id?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) templateId?: string | null;
  @Field(() => EndpointTemplateInput, { nullable: true }) template?: EndpointTemplateInput | null;
  @Field(() => String, {
    nullable: true,
    description: 'Comma-separated GPU pools (e.g. ADA_24) and GPU type ids; "" for the default.',
  })
  gpuIds?: string | null;
  @Field(() => Int, { nullable: true }) gpuCount?: number | null;
  @Field(() => [String], {
    nullable: 'itemsAndList',
    description: 'A CPU endpoint: "<flavor>-<vcpus>-<memory>", e.g. cpu3c-2-4.',
  })
  instanceIds?: Array<string | null> | null;
  @Field(() => Int, { nullable: true }) workersMin?: number | null;
  @Field(() => Int, { nullable: true }) workersMax?: number | null;
  @Field(() => Int, { nullable: true, description: 'No effect.' }) workersStandby?: number | null;
  @Field(() => Int, { nullable: true }) idleTimeout?: number | null;
  @Field(() => String, { nullable: true, description: 'QUEUE_DELAY or REQUEST_COUNT.' })
  scalerType?: string | null;
  @Field(() => Int, { nullable: true }) scalerValue?: number | null;
  @Field(() => Int, { nullable: true }) executionTimeoutMs?: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'Comma-separated data center ids; "" for any.',
  })
  locations?: string | null;
  @Field(() => String, { nullable: true, description: '"" for none.' })
  networkVolumeId?: string | null;
  @Field(() => [NetworkVolumeIdInput], {
    nullable: 'itemsAndList',
    description: 'The first one is used when networkVolumeId is not given.',
  })
  networkVolumeIds?: Array<NetworkVolumeIdInput | null> | null;
  @Field(() => FlashBootType, { nullable: true, description: 'No effect.' })
  flashBootType?: FlashBootType | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) allowedCudaVersions?:
    string | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) minCudaVersion?:
    string | null;
  @Field(() => [String], { nullable: 'itemsAndList', description: 'No effect.' })
  modelReferences?: Array<string | null> | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) hubReleaseId?: string | null;
  @Field(() => String, { nullable: true, description: 'QB (default); LB is refused.' })
  type?: string | null;
}

@InputType('UpdateEndpointTemplateInput')
export class UpdateEndpointTemplateInput {
  @Field(() => String, { nullable: true }) endpointId?: string | null;
  @Field(() => String, { nullable: true }) templateId?: string | null;
}
