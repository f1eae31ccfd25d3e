import { isServiceName, SERVICE_NAMES, type ServiceName } from '@runplane/contracts';
import type { ServiceDescriptor } from '@runplane/platform';
import { podRestService } from '@runplane/pod-rest';
import { queueApiService } from '@runplane/queue-api';
import { schedulerService } from '@runplane/scheduler';
import { secretsVaultService } from '@runplane/secrets-vault';
import { templateGraphqlService } from '@runplane/template-graphql';
import { webhookSenderService } from '@runplane/webhook-sender';

/** Every service of Runplane, in start order (the vault first: the others ask it about keys). */
export const ALL_SERVICES: Record<ServiceName, ServiceDescriptor> = {
  'secrets-vault': secretsVaultService,
  scheduler: schedulerService,
  'template-graphql': templateGraphqlService,
  'pod-rest': podRestService,
  'webhook-sender': webhookSenderService,
  'queue-api': queueApiService,
};

export function serviceByName(name: string): ServiceDescriptor {
  if (!isServiceName(name))
    throw new Error(`unknown service "${name}"; one of: ${SERVICE_NAMES.join(', ')}`);
  return ALL_SERVICES[name];
}
