/** The six services of Runplane. Names double as bus consumer groups and Postgres schema names. */
export const SERVICE_NAMES = [
  'queue-api',
  'scheduler',
  'webhook-sender',
  'pod-rest',
  'template-graphql',
  'secrets-vault',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export function isServiceName(value: string): value is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(value);
}
