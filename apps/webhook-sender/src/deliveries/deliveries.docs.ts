import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in deliveries.controller.ts, one decorator per route.

export const DeliveriesControllerDocs = () => applyDecorators(ApiTags('Webhooks'));

export const ListDeliveriesDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "The caller's job webhooks, newest first",
      description: "At most 100; `jobId` filters one job's.",
    }),
    ApiOkResponse({
      description: 'Deliveries with every attempt.',
      schema: listOf('WebhookDeliveryView'),
    }),
  );

export const GetDeliveryDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'One webhook delivery',
      description: 'The id is the `webhook-id` header of its calls.',
    }),
    ApiOkResponse({
      description: 'The delivery with every attempt.',
      schema: schemaRef('WebhookDeliveryView'),
    }),
    ApiErrors(404),
  );

export const RedeliverDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Send a webhook again',
      description: 'Same body and `webhook-id`; a new round of attempts.',
    }),
    ApiOkResponse({
      description: 'The delivery, `pending` again.',
      schema: schemaRef('WebhookDeliveryView'),
    }),
    ApiErrors(404),
  );

export const SigningSecretDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "The signing secret of the caller's webhooks",
      description:
        'Verify the `webhook-signature` header with it (Standard Webhooks; `verifyWebhook` in @runplane/contracts).',
    }),
    ApiOkResponse({
      description: 'The secret.',
      schema: {
        type: 'object',
        properties: { key: { type: 'string', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } },
        required: ['key'],
      },
    }),
  );
