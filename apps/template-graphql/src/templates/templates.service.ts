import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { LOGGER, type Logger } from '@runplane/platform';
import {
  RunplaneError,
  SchedulerRpc,
  TemplateEvents,
  type Ack,
  type PortLabel,
  type Template,
  type TemplateCreateDto,
  type TemplateRevisionInfo,
  type TemplateUpdateDto,
  type TemplateUpdatedEvent,
} from '@runplane/contracts';
import { isDeepStrictEqual } from 'node:util';
import { OutboxRelay, type NewOutboxRow } from '@runplane/database';
import { newTemplateId } from './template-ids.js';
import { TemplateUsage } from './template-usage.js';
import { toTemplate } from './template-view.js';
import {
  NAME_TAKEN,
  TemplatesRepository,
  type TemplateChanges,
  type TemplateRow,
} from './templates.repository.js';

/**
 * Defaults of RunPod's TemplateCreateInput, which are also what a field holds
 * until an update sets it. An update changes only the
 * fields it names. A serverless template has no volume, so its volumeInGb defaults to 0.
 */
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
const UPDATABLE = [
  'name',
  'imageName',
  'containerDiskInGb',
  'containerRegistryAuthId',
  'dockerEntrypoint',
  'dockerStartCmd',
  'env',
  'isPublic',
  'ports',
  'portsConfig',
  'readme',
  'volumeInGb',
  'volumeMountPath',
] as const satisfies ReadonlyArray<keyof TemplateUpdateDto>;

// `null` counts as "not given" (validation lets it through as optional), except for the one
// nullable field, where it removes the registry credentials.
const given = <T>(value: T | null | undefined, fallback: T): T =>
  value === undefined || value === null ? fallback : value;

const notFound = (id: string) =>
  RunplaneError.notFound(`template ${id} not found`, 'TEMPLATE_NOT_FOUND');
const noVolumeForServerless = (volumeInGb: number) =>
  RunplaneError.badRequest(
    `a serverless template has no volume: volumeInGb must be 0 (got ${volumeInGb}); workers keep data on their container disk or a network volume`,
    [{ path: 'volumeInGb', message: 'must be 0 for a serverless template' }],
  );
const nameTaken = (name: string) =>
  RunplaneError.conflict(`a template named "${name}" already exists`, 'TEMPLATE_NAME_TAKEN');

/** Templates: what a worker or Pod runs. Readable by their owner (and by anyone when public), changed only by the owner. */
@Injectable()
export class TemplatesService {
  constructor(
    private readonly templates: TemplatesRepository,
    private readonly relay: OutboxRelay,
    private readonly usage: TemplateUsage,
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async create(ownerId: string, input: TemplateCreateDto): Promise<Template> {
    const d = TEMPLATE_DEFAULTS;
    const isServerless = given(input.isServerless, d.isServerless);
    // Spec saveTemplate rule 2: a serverless template has volumeInGb 0.
    if (isServerless && (input.volumeInGb ?? 0) > 0) throw noVolumeForServerless(input.volumeInGb!);
    const ports = given(input.ports, d.ports);
    const row = await this.templates.create({
      id: newTemplateId(),
      ownerId,
      name: input.name,
      imageName: input.imageName,
      category: given(input.category, d.category),
      containerDiskInGb: given(input.containerDiskInGb, d.containerDiskInGb),
      volumeInGb: given(input.volumeInGb, isServerless ? 0 : d.volumeInGb),
      volumeMountPath: given(input.volumeMountPath, d.volumeMountPath),
      containerRegistryAuthId: input.containerRegistryAuthId ?? null,
      dockerEntrypoint: given(input.dockerEntrypoint, d.dockerEntrypoint),
      dockerStartCmd: given(input.dockerStartCmd, d.dockerStartCmd),
      env: given(input.env, d.env),
      ports,
      portsConfig: portLabels(input.portsConfig ?? [], ports),
      isPublic: given(input.isPublic, d.isPublic),
      isServerless,
      readme: given(input.readme, d.readme),
    });
    if (row === NAME_TAKEN) throw nameTaken(input.name);
    return toTemplate(row);
  }

  async list(ownerId: string, includePublic = false): Promise<Template[]> {
    return (await this.templates.listVisible(ownerId, includePublic)).map(toTemplate);
  }

  /** Public templates of other users: what RunPod's clients list as community templates. */
  async listCommunity(ownerId: string): Promise<Template[]> {
    return (await this.templates.listPublicOfOthers(ownerId)).map(toTemplate);
  }

  async get(ownerId: string, id: string): Promise<Template> {
    const row = await this.templates.findVisible(ownerId, id);
    if (!row) throw notFound(id);
    return toTemplate(row);
  }

  /**
   * The template as a workload runs it: at `revision` (what a pinned endpoint runs) or the current
   * one, readable while the template itself is (its owner's, or public). `withRevision` adds the
   * current revision and whether the caller owns it, which the scheduler pins endpoints with.
   */
  async getRevision(
    ownerId: string,
    id: string,
    revision?: number,
    withRevision = false,
  ): Promise<Template & Partial<TemplateRevisionInfo>> {
    const row = await this.templates.findVisible(ownerId, id);
    if (!row) throw notFound(id);
    let template = toTemplate(row);
    if (revision !== undefined && revision !== row.revision) {
      const past = await this.templates.findRevision(id, revision);
      if (!past)
        throw RunplaneError.notFound(
          `template ${id} has no revision ${revision}`,
          'TEMPLATE_NOT_FOUND',
        );
      template = toTemplate({ ...row, ...past, id: row.id, createdAt: row.createdAt });
    }
    return withRevision
      ? { ...template, revision: row.revision, owned: row.ownerId === ownerId }
      : template;
  }

  /** The owner's template (not a public one of someone else's: that is not theirs to change). */
  async getOwned(ownerId: string, id: string): Promise<Template> {
    const row = await this.templates.findOwned(ownerId, id);
    if (!row) throw notFound(id);
    return toTemplate(row);
  }

  /** The owner's template of that name (GraphQL deleteTemplate identifies templates by name). */
  async getOwnedByName(ownerId: string, name: string): Promise<Template> {
    const row = await this.templates.findOwnedByName(ownerId, name);
    if (!row) throw RunplaneError.notFound(`template "${name}" not found`, 'TEMPLATE_NOT_FOUND');
    return toTemplate(row);
  }

  /**
   * Changes only the fields given. A real change makes a new revision and is announced with
   * `template.updated` (the owner's endpoints on the template roll out a new version; other users'
   * stay on their revision); an update that changes nothing is not.
   */
  async update(ownerId: string, id: string, input: TemplateUpdateDto): Promise<Template> {
    const current = await this.templates.findOwned(ownerId, id);
    if (!current) throw notFound(id);
    const changes = changedFields(current, {
      ...input,
      ...labelsAfter(current, input),
    });
    if (!Object.keys(changes).length) return toTemplate(current);
    if (current.isServerless && typeof changes.volumeInGb === 'number' && changes.volumeInGb > 0)
      throw noVolumeForServerless(changes.volumeInGb);
    // The event names the revision the change makes, known inside the repository's transaction.
    const made: { event?: NewOutboxRow } = {};
    const row = await this.templates.updateOwned(ownerId, id, changes, (updated) => {
      made.event = OutboxRelay.entry<TemplateUpdatedEvent>(TemplateEvents.updated, {
        templateId: id,
        ownerId,
        revision: updated.revision,
      });
      return made.event;
    });
    if (row === NAME_TAKEN) throw nameTaken(String(changes.name));
    const event = made.event;
    if (!row || !event) throw notFound(id); // deleted meanwhile
    // Published before the reply; if that fails the outbox still has it. The scheduler also applies
    // the release directly (once per event id), so the caller's next read of an endpoint already
    // shows its new version; if it does not answer in time, the event does it a little later.
    await this.relay.publishNow(event);
    await this.bus
      .request(
        SchedulerRpc.releaseTemplate,
        { templateId: id, eventId: event.id, ownerId, revision: row.revision },
        { timeoutMs: 5000 },
      )
      .catch((err: unknown) =>
        this.logger.warn(
          { templateId: id, err: String(err) },
          'rolling release not confirmed by the scheduler; the template.updated event will apply it',
        ),
      );
    return toTemplate(row);
  }

  /**
   * Deletes the owner's template unless it is in use or was used within the last 2 minutes (spec
   * deleteTemplate rules 2 and 3: 409 saying which). An endpoint created between the check and the
   * delete would be left on a missing template; its workers then fail to start with a clear reason.
   */
  async delete(ownerId: string, id: string): Promise<Ack> {
    const row = await this.templates.findOwned(ownerId, id);
    if (!row) throw notFound(id);
    await this.usage.assertDeletable(row);
    if (!(await this.templates.deleteOwned(ownerId, id))) throw notFound(id);
    return { ok: true };
  }

  /** GraphQL deleteTemplate(templateName): the same rules, the template named by its owner. */
  async deleteByName(ownerId: string, name: string): Promise<Ack> {
    return this.delete(ownerId, (await this.getOwnedByName(ownerId, name)).id);
  }
}

/**
 * Port labels must name ports the template exposes, each once. A change of `ports` alone keeps
 * the labels of the ports that remain (a label of a port no longer exposed means nothing).
 */
function portLabels(labels: PortLabel[], ports: string[]): PortLabel[] {
  const exposed = new Set(ports.map((p) => p.split('/')[0]));
  const seen = new Set<string>();
  for (const label of labels) {
    const port = String(Number(label.port));
    if (!exposed.has(port))
      throw RunplaneError.badRequest(
        `portsConfig labels port ${label.port}, which the template does not expose (ports: ${ports.join(', ') || 'none'})`,
        [{ path: 'portsConfig', message: `port ${label.port} is not one of ports` }],
      );
    if (seen.has(port))
      throw RunplaneError.badRequest(`portsConfig labels port ${port} twice`, [
        { path: 'portsConfig', message: `port ${port} is labelled twice` },
      ]);
    seen.add(port);
  }
  return labels.map((l) => ({ port: String(Number(l.port)), name: l.name }));
}

function labelsAfter(
  current: TemplateRow,
  input: TemplateUpdateDto,
): Pick<TemplateUpdateDto, 'portsConfig'> {
  const ports = input.ports ?? current.ports;
  if (input.portsConfig) return { portsConfig: portLabels(input.portsConfig, ports) };
  if (!input.ports) return {};
  const exposed = new Set(ports.map((p) => p.split('/')[0]));
  const kept = (current.portsConfig as unknown as PortLabel[]).filter((l) => exposed.has(l.port));
  return { portsConfig: kept };
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
