/** The job webhook as an OpenAPI `webhooks` entry: the call Runplane makes to a job's `webhook` URL. */
export const JOB_WEBHOOK_OPENAPI = {
  post: {
    tags: ['Webhooks'],
    operationId: 'Webhook_jobFinished',
    summary: 'A job with a `webhook` reached a final state',
    description: `POSTed to the job's \`webhook\` URL for COMPLETED, FAILED, CANCELLED and TIMED_OUT. Any 2xx
acknowledges it; otherwise it is tried again (3 attempts, 10 s apart, 10 s timeout each: WEBHOOK_MAX_ATTEMPTS,
WEBHOOK_RETRY_DELAY_MS, WEBHOOK_TIMEOUT_MS); redirects are not followed. Signed per Standard Webhooks with the account's
signing secret (\`GET /v1/webhooks/secret\`; \`verifyWebhook\` in @runplane/contracts checks it). Every attempt and
redelivery carries the same \`webhook-id\`: receivers de-duplicate on it.`,
    parameters: [
      {
        name: 'webhook-id',
        in: 'header',
        required: true,
        description: 'The delivery id (`GET /v1/webhooks/deliveries/{id}`).',
        schema: { type: 'string' },
      },
      {
        name: 'webhook-timestamp',
        in: 'header',
        required: true,
        description: 'Unix seconds of this attempt.',
        schema: { type: 'string' },
      },
      {
        name: 'webhook-signature',
        in: 'header',
        required: true,
        description: '`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.',
        schema: { type: 'string' },
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            description:
              'The `/status` record at the moment the job became final, plus its `input` and `webhook`.',
            allOf: [
              { $ref: '#/components/schemas/JobRecord' },
              {
                type: 'object',
                properties: {
                  input: { type: 'object' },
                  webhook: { type: 'string', format: 'uri' },
                },
              },
            ],
          },
          example: {
            id: '5f2c6b9e-3d1a-4c8e-9b7f-2a6d4e8c1f03',
            status: 'COMPLETED',
            delayTime: 824,
            executionTime: 3391,
            output: { text: 'Hello!' },
            input: { prompt: 'Hello, world' },
            webhook: 'https://example.com/hook',
          },
        },
      },
    },
    responses: { 200: { description: 'Received (any 2xx).' } },
  },
};
