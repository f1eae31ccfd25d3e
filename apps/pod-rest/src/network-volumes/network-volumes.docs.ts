import { applyDecorators } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in network-volumes.controller.ts,
// one decorator per route.

const VOLUME = { description: 'The network volume.', schema: schemaRef('NetworkVolume') };

export const NetworkVolumesControllerDocs = () => applyDecorators(ApiTags('Network volumes'));

export const CreateNetworkVolumeDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Create a network volume',
      description:
        '`name`, `size` (GB, 1-4000) and `dataCenterId` (a data center of this installation) are required.',
    }),
    ApiOkResponse(VOLUME),
    ApiError(400, 'Invalid field, or a data center this installation does not have.'),
  );

export const ListNetworkVolumesDocs = () =>
  applyDecorators(
    ApiOperation({ summary: "List the caller's network volumes" }),
    ApiOkResponse({ description: 'The network volumes.', schema: listOf('NetworkVolume') }),
  );

export const GetNetworkVolumeDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Get a network volume' }),
    ApiOkResponse(VOLUME),
    ApiErrors(404),
  );

export const UpdateNetworkVolumeDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Rename or grow a network volume',
      description: 'A volume never shrinks.',
    }),
    ApiOkResponse(VOLUME),
    ApiErrors(404),
    ApiError(400, 'Invalid field, or a size below the current one.'),
  );

export const UpdateNetworkVolumeByPostDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Rename or grow a network volume (POST form)' }),
    ApiOkResponse(VOLUME),
    ApiErrors(404),
    ApiError(400, 'Invalid field, or a size below the current one.'),
  );

export const DeleteNetworkVolumeDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Delete a network volume and its data' }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiErrors(404),
    ApiError(409, 'A Pod still uses the volume: delete the Pod first.'),
  );
