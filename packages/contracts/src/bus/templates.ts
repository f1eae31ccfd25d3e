import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Min,
  ValidateNested,
} from 'class-validator';
import { TemplateCreateDto, TemplateUpdateDto, type Template } from '../templates/template.dto.js';
import { defineEvent, defineRpc } from './definitions.js';
import { OwnedRequest, type Ack } from './scheduler.js';

export class TemplateScopedRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() templateId!: string;
}

/**
 * A template as a workload runs it. Every real change of a template makes a new revision; an
 * endpoint of another user on a public template stays on the revision it was set to (see
 * docs/architecture.md, "Rolling release"), so its workers start from that revision.
 */
export class TemplateGetRequest extends TemplateScopedRequest {
  /** That revision's content (the current one when absent); readable while the template is. */
  @IsOptional() @IsInt() @Min(1) revision?: number;
  /** Also answer `revision` and `owned` (for the scheduler; never shown to users). */
  @IsOptional() @IsBoolean() withRevision?: boolean;
}

/** What `get` adds with `withRevision`: the current revision and whether the caller owns the template. */
export interface TemplateRevisionInfo {
  revision: number;
  owned: boolean;
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

/** Published after a template changed, so its owner's endpoints on it roll out a new version. */
export class TemplateUpdatedEvent {
  @IsString() templateId!: string;
  @IsString() ownerId!: string;
  /** The revision the change made (absent in events written before templates had revisions). */
  @IsOptional() @IsInt() @Min(2) revision?: number;
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
  /** Readable by the owner, and by anyone for public templates (so are its past revisions). */
  get: defineRpc<TemplateGetRequest, Template & Partial<TemplateRevisionInfo>>(
    'template-graphql',
    'templates.get',
    TemplateGetRequest,
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
