/**
 * CloudNativePG `postgresql.cnpg.io/v1` `Cluster`: the fields Runplane's prod overlay uses, from
 * the CloudNativePG API reference (ClusterSpec, BootstrapConfiguration/BootstrapInitDB,
 * StorageConfiguration, MonitoringConfiguration, PostgresConfiguration). Strict: a field outside
 * this subset fails the check, so using a new one means adding it here with its type.
 */
const quantity = {
  anyOf: [{ type: 'string', pattern: '^[0-9.]+([numkMGTPE]|[KMGTPE]i)?$' }, { type: 'number' }],
};
const strict = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});

export const cnpgClusterSchema = strict(
  {
    apiVersion: { const: 'postgresql.cnpg.io/v1' },
    kind: { const: 'Cluster' },
    metadata: strict(
      {
        name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 50 },
        namespace: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        annotations: { type: 'object', additionalProperties: { type: 'string' } },
      },
      ['name'],
    ),
    spec: strict(
      {
        instances: { type: 'integer', minimum: 1 },
        imageName: { type: 'string', minLength: 1 },
        primaryUpdateStrategy: { enum: ['unsupervised', 'supervised'] },
        bootstrap: strict({
          initdb: strict({
            database: { type: 'string' },
            owner: { type: 'string' },
            secret: strict({ name: { type: 'string' } }, ['name']),
          }),
        }),
        storage: strict({ size: quantity, storageClass: { type: 'string' } }, ['size']),
        resources: strict({
          requests: { type: 'object', additionalProperties: quantity },
          limits: { type: 'object', additionalProperties: quantity },
        }),
        monitoring: strict({ enablePodMonitor: { type: 'boolean' } }),
        postgresql: strict({
          parameters: { type: 'object', additionalProperties: { type: 'string' } },
        }),
      },
      ['instances', 'storage'],
    ),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);
