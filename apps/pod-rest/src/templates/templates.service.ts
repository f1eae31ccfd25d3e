import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  TemplateCreateDto,
  TemplateRpc,
  TemplateUpdateDto,
  type Principal,
  type Template,
} from '@runplane/contracts';
import { declaredFields } from '../http/declared-fields.js';

/** REST v1 templates, carried out by template-graphql (which owns them) over the bus. */
@Injectable()
export class TemplatesService {
  constructor(private readonly bus: Bus) {}

  create(principal: Principal, body: TemplateCreateDto): Promise<Template> {
    return this.bus.request(TemplateRpc.create, {
      ownerId: principal.userId,
      template: declaredFields(TemplateCreateDto, body),
    });
  }

  list(principal: Principal, includePublicTemplates: boolean): Promise<Template[]> {
    return this.bus.request(TemplateRpc.list, {
      ownerId: principal.userId,
      includePublicTemplates,
    });
  }

  get(principal: Principal, templateId: string): Promise<Template> {
    return this.bus.request(TemplateRpc.get, { ownerId: principal.userId, templateId });
  }

  update(principal: Principal, templateId: string, body: TemplateUpdateDto): Promise<Template> {
    const changes = declaredFields(TemplateUpdateDto, body, ['containerRegistryAuthId']);
    return this.bus.request(TemplateRpc.update, { ownerId: principal.userId, templateId, changes });
  }

  async delete(principal: Principal, templateId: string): Promise<void> {
    await this.bus.request(TemplateRpc.delete, { ownerId: principal.userId, templateId });
  }
}
