import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { TemplateCreateDto, TemplateUpdateDto, type Principal } from '@runplane/contracts';
import {
  CreateTemplateDocs,
  DeleteTemplateDocs,
  GetTemplateDocs,
  ListTemplatesDocs,
  TemplatesControllerDocs,
  UpdateTemplateByPostDocs,
  UpdateTemplateDocs,
} from './templates.docs.js';
import { TemplateListQuery } from './template-query.dto.js';
import { TemplatesService } from './templates.service.js';

/**
 * RunPod REST v1 templates: create 200, bare-array list, get, update by
 * PATCH or `POST .../update`, delete 204. Another user's private template
 * is "not found".
 */
@TemplatesControllerDocs()
@Controller('v1/templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Post()
  @CreateTemplateDocs()
  @HttpCode(200)
  create(@CurrentPrincipal() principal: Principal, @Body() body: TemplateCreateDto) {
    return this.templates.create(principal, body);
  }

  @Get()
  @ListTemplatesDocs()
  list(@CurrentPrincipal() principal: Principal, @Query() query: TemplateListQuery) {
    return this.templates.list(principal, query.includePublicTemplates ?? false);
  }

  @Get(':templateId')
  @GetTemplateDocs()
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Query() _query: TemplateListQuery,
  ) {
    return this.templates.get(principal, templateId);
  }

  @Patch(':templateId')
  @UpdateTemplateDocs()
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Body() body: TemplateUpdateDto,
  ) {
    return this.templates.update(principal, templateId, body);
  }

  @Post(':templateId/update')
  @UpdateTemplateByPostDocs()
  @HttpCode(200)
  updateByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
    @Body() body: TemplateUpdateDto,
  ) {
    return this.templates.update(principal, templateId, body);
  }

  @Delete(':templateId')
  @DeleteTemplateDocs()
  @HttpCode(204)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('templateId') templateId: string,
  ): Promise<void> {
    await this.templates.delete(principal, templateId);
  }
}
