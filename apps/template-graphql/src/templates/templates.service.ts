import { Injectable } from '@nestjs/common';
import { RunplaneError, TemplateEvents, type Ack, type Template, type TemplateCreateDto, type TemplateUpdateDto, type TemplateUpdatedEvent } from '@runplane/contracts';
import { isDeepStrictEqual } from 'node:util';
import { OutboxRelay } from '@runplane/database';
import { newTemplateId } from './template-ids.js';
import { toTemplate } from './template-view.js';
import { NAME_TAKEN, TemplatesRepository, type TemplateChanges, type TemplateRow } from './templates.repository.js';

/** Defaults of RunPod's TemplateCreateInput (reference §4.3). */
export const TEMPLATE_DEFAULTS = {
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  dockerEntrypoint: [] as string[],
  dockerStartCmd: [] as string[],
  env: {} as Record<string, string>,
  ports: [] as string[],
  isPublic: false,
  isServerless: false,
  readme: '',
};

/** Fields an update may change (TemplateUpdateInput); anything else in the body is ignored. */
const UPDATABLE = ['name', 'imageName', 'containerDiskInGb', 'containerRegistryAuthId', 'dockerEntrypoint', 'dockerStartCmd',
  'env', 'isPublic', 'ports', 'readme', 'volumeInGb', 'volumeMountPath'] as const satisfies ReadonlyArray<keyof TemplateUpdateDto>;

// `null` counts as "not given" (validation lets it through as optional), except for the one
// nullable field, where it removes the registry credentials.
const given = <T>(value: T | null | undefined, fallback: T): T => (value === undefined || value === null ? fallback : value);

const notFound = (id: string) => RunplaneError.notFound(`template ${id} not found`, 'TEMPLATE_NOT_FOUND');
const nameTaken = (name: string) => RunplaneError.conflict(`a template named "${name}" already exists`, 'TEMPLATE_NAME_TAKEN');

/** Templates: what a worker or Pod runs. Readable by their owner (and by anyone when public), changed only by the owner. */
@Injectable()
export class TemplatesService {
  constructor(private readonly templates: TemplatesRepository, private readonly relay: OutboxRelay) {}

  async create(ownerId: string, input: TemplateCreateDto): Promise<Template> {
    const d = TEMPLATE_DEFAULTS;
    const row = await this.templates.create({
      id: newTemplateId(),
      ownerId,
      name: input.name,
      imageName: input.imageName,
      category: given(input.category, d.category),
      containerDiskInGb: given(input.containerDiskInGb, d.containerDiskInGb),
      volumeInGb: given(input.volumeInGb, d.volumeInGb),
      volumeMountPath: given(input.volumeMountPath, d.volumeMountPath),
      containerRegistryAuthId: input.containerRegistryAuthId ?? null,
      dockerEntrypoint: given(input.dockerEntrypoint, d.dockerEntrypoint),
      dockerStartCmd: given(input.dockerStartCmd, d.dockerStartCmd),
      env: given(input.env, d.env),
      ports: given(input.ports, d.ports),
      isPublic: given(input.isPublic, d.isPublic),
      isServerless: given(input.isServerless, d.isServerless),
      readme: given(input.readme, d.readme),
    });
    if (row === NAME_TAKEN) throw nameTaken(input.name);
    return toTemplate(row);
  }

  async list(ownerId: string, includePublic = false): Promise<Template[]> {
    return (await this.templates.listVisible(ownerId, includePublic)).map(toTemplate);
  }

  async get(ownerId: string, id: string): Promise<Template> {
    const row = await this.templates.findVisible(ownerId, id);
    if (!row) throw notFound(id);
    return toTemplate(row);
  }

  /**
   * Changes only the fields given. A real change is announced with `template.updated` (every
   * endpoint using the template rolls out a new version); an update that changes nothing is not.
   */
  async update(ownerId: string, id: string, input: TemplateUpdateDto): Promise<Template> {
    const current = await this.templates.findOwned(ownerId, id);
    if (!current) throw notFound(id);
    const changes = changedFields(current, input);
    if (!Object.keys(changes).length) return toTemplate(current);
    const event = OutboxRelay.entry<TemplateUpdatedEvent>(TemplateEvents.updated, { templateId: id, ownerId });
    const row = await this.templates.updateOwned(ownerId, id, changes, event);
    if (row === NAME_TAKEN) throw nameTaken(String(changes.name));
    if (!row) throw notFound(id); // deleted meanwhile
    // Published before the reply, so the caller's next read already sees its effects as far as the
    // bus allows (the rolling release starts at once); if this fails the outbox still has it.
    await this.relay.publishNow(event);
    return toTemplate(row);
  }

  /**
   * TODO(templates issue): refuse (409) while an endpoint or Pod uses the template (spec
   * deleteTemplate rule 2); that needs the scheduler's and pod-rest's answer. Unconditional for now.
   */
  async delete(ownerId: string, id: string): Promise<Ack> {
    if (!(await this.templates.deleteOwned(ownerId, id))) throw notFound(id);
    return { ok: true };
  }
}

/** The given fields whose value differs from the stored one. */
function changedFields(current: TemplateRow, input: TemplateUpdateDto): TemplateChanges {
  const changes: Record<string, unknown> = {};
  for (const field of UPDATABLE) {
    const value = input[field];
    if (value === undefined || (value === null && field !== 'containerRegistryAuthId')) continue;
    if (!isDeepStrictEqual(value, current[field])) changes[field] = value;
  }
  return changes as TemplateChanges;
}
