import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import { TemplateCreateDto, TemplateUpdateDto, type Principal } from '@runplane/contracts';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { TemplateListQuery } from './template-query.dto.js';
import { TemplatesService } from './templates.service.js';

/**
 * RunPod REST v1 templates: create 200, bare-array list, get, update by
 * PATCH or `POST .../update`, delete 204. Another user's private template
 * is "not found".
 */
const UPDATED = {
  description: 'The template after the change; endpoints using it get a rolling release.',
  schema: schemaRef('Template'),
};

@ApiTags('Templates')
@Controller('v1/templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Post()
  @ApiOperation({ summary: 'Create a template' })
  @ApiOkResponse({ description: 'The template.', schema: schemaRef('Template') })
  @ApiError(409, 'The caller already has a template of that name.')
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: TemplateCreateDto) {
    return this.templates.create(principal, body);
  }

  @Get()
  @ApiOperation({
    summary: "List the caller's templates",
    description: "`includePublicTemplates=true` adds other users' public templates.",
  })
  @ApiOkResponse({ description: 'The templates.', schema: listOf('Template') })
  list(@CurrentPrincipal() principal: Principal, @Query() query: TemplateListQuery) {
    return this.templates.list(principal, query.includePublicTemplates ?? false);
  }

  @Get(':templateId')
  @ApiOperation({ summary: 'Get a template', description: "The caller's own or a public one." })
  @ApiOkResponse({ description: 'The template.', schema: schemaRef('Template') })
  @ApiErrors(404)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Query() _query: TemplateListQuery,
  ) {
    return this.templates.get(principal, templateId);
  }

  @Patch(':templateId')
  @ApiOperation({ summary: 'Update a template', description: 'Only the fields given change.' })
  @ApiOkResponse(UPDATED)
  @ApiErrors(404, 409)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Body() body: TemplateUpdateDto,
  ) {
    return this.templates.update(principal, templateId, body);
  }

  @Post(':templateId/update')
  @ApiOperation({
    summary: 'Update a template (POST form, as RunPod names it)',
    description: 'Only the fields given change.',
  })
  @ApiOkResponse(UPDATED)
  @ApiErrors(404, 409)
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Body() body: TemplateUpdateDto,
  ) {
    return this.templates.update(principal, templateId, body);
  }

  @Delete(':templateId')
  @ApiOperation({ summary: 'Delete a template' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(404)
  @ApiError(409, 'An endpoint or Pod uses the template, or a Pod ran it within the last 2 minutes.')
  @ApiError(503)
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
  ): Promise<void> {
    await this.templates.delete(principal, templateId);
  }
}
