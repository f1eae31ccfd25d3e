import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  ValidateNested,
} from 'class-validator';
import { TemplateCreateDto, TemplateUpdateDto, type Template } from '../templates/template.dto.js';
import { defineEvent, defineRpc } from './definitions.js';
import { OwnedRequest, type Ack } from './scheduler.js';

export class TemplateScopedRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() templateId!: string;
}

export class CreateTemplateRequest extends OwnedRequest {
  @IsObject() @ValidateNested() @Type(() => TemplateCreateDto) template!: TemplateCreateDto;
}

export class UpdateTemplateRequest extends TemplateScopedRequest {
  @IsObject() @ValidateNested() @Type(() => TemplateUpdateDto) changes!: TemplateUpdateDto;
}

export class ListTemplatesRequest extends OwnedRequest {
  @IsOptional() @IsBoolean() includePublicTemplates?: boolean;
}

/** Published after a template changed, so every endpoint using it rolls out a new version. */
export class TemplateUpdatedEvent {
  @IsString() templateId!: string;
  @IsString() ownerId!: string;
}

/** Request/reply operations answered by template-graphql, which owns templates. */
export const TemplateRpc = {
  create: defineRpc<CreateTemplateRequest, Template>(
    'template-graphql',
    'templates.create',
    CreateTemplateRequest,
  ),
  list: defineRpc<ListTemplatesRequest, Template[]>(
    'template-graphql',
    'templates.list',
    ListTemplatesRequest,
  ),
  /** Readable by the owner, and by anyone for public templates. */
  get: defineRpc<TemplateScopedRequest, Template>(
    'template-graphql',
    'templates.get',
    TemplateScopedRequest,
  ),
  update: defineRpc<UpdateTemplateRequest, Template>(
    'template-graphql',
    'templates.update',
    UpdateTemplateRequest,
  ),
  delete: defineRpc<TemplateScopedRequest, Ack>(
    'template-graphql',
    'templates.delete',
    TemplateScopedRequest,
  ),
} as const;

export const TemplateEvents = {
  updated: defineEvent<TemplateUpdatedEvent>({
    name: 'template.updated',
    version: 1,
    producer: 'template-graphql',
    consumers: ['scheduler'],
    payloadType: TemplateUpdatedEvent,
  }),
} as const;
