import {
  RunplaneError,
  TemplateCreateDto,
  TemplateUpdateDto,
  type ErrorDetail,
  type Template,
} from '@runplane/contracts';
import { flattenValidationErrors } from '@runplane/platform';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { join as shellJoin, split as shellSplit } from 'shlex';
import type { EnvironmentVariableInput, PodTemplate, SaveTemplateInput } from './graphql.types.js';

/**
 * One template model, two shapes: REST (the stored one: `dockerStartCmd` array, `ports` array,
 * `env` map) and GraphQL (`dockerArgs` one string, `ports` a comma-separated string, `env` a
 * `{key, value}` list). Conversions are lossless for everything a client can express.
 */

/** The REST template as GraphQL shows it. */
export function toPodTemplate(t: Template): PodTemplate {
  return {
    id: t.id,
    name: t.name,
    imageName: t.imageName,
    // The start command, shell-quoted so that it splits back into the same argv.
    dockerArgs: shellJoin(t.dockerStartCmd),
    containerDiskInGb: t.containerDiskInGb,
    volumeInGb: t.volumeInGb,
    volumeMountPath: t.volumeMountPath,
    ports: t.ports.join(','),
    portsConfig: t.ports.map((p) => {
      const [port, name] = p.split('/');
      return { port: Number(port), name };
    }),
    env: Object.entries(t.env).map(([key, value]) => ({ key, value })),
    readme: t.readme,
    isServerless: t.isServerless,
    isPublic: t.isPublic,
    isRunpod: t.isRunpod,
    category: t.category,
    containerRegistryAuthId: t.containerRegistryAuthId ?? null,
    earned: t.earned,
    runtimeInMin: t.runtimeInMin,
    startJupyter: false,
    startSsh: false,
  };
}

/** Spec saveTemplate rule 1: required on create, and resent with `id` on modify (rule 5). */
const REQUIRED = ['name', 'imageName', 'containerDiskInGb', 'volumeInGb'] as const;
const PORT = /^\d{1,5}\/(http|tcp)$/;

/** REST-shape fields of a saveTemplate input: checked, converted, and validated like a REST body. */
export function fromSaveTemplateInput(
  input: SaveTemplateInput | null | undefined,
  mode: 'create' | 'modify',
): TemplateCreateDto {
  const problems: ErrorDetail[] = [];
  const i = input ?? {};
  for (const field of REQUIRED) {
    if (i[field] === undefined || i[field] === null)
      problems.push({ path: field, message: `${field} is required` });
  }
  const out: Record<string, unknown> = {};
  for (const field of [
    'name',
    'imageName',
    'containerDiskInGb',
    'volumeInGb',
    'volumeMountPath',
    'readme',
    'isServerless',
    'isPublic',
    'category',
  ] as const) {
    if (i[field] !== undefined && i[field] !== null) out[field] = i[field];
  }
  if (i.containerRegistryAuthId !== undefined && i.containerRegistryAuthId !== null) {
    // Python's client sends "" for "no credentials".
    out.containerRegistryAuthId =
      i.containerRegistryAuthId === '' ? null : i.containerRegistryAuthId;
  }
  if (i.dockerArgs !== undefined && i.dockerArgs !== null) {
    try {
      out.dockerStartCmd = shellSplit(i.dockerArgs);
    } catch (err) {
      problems.push({
        path: 'dockerArgs',
        message: `dockerArgs cannot be split into arguments: ${(err as Error).message}`,
      });
    }
  }
  if (i.ports !== undefined && i.ports !== null) {
    const ports = i.ports
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const bad = ports.filter((p) => !PORT.test(p));
    if (bad.length)
      problems.push({
        path: 'ports',
        message: `ports must be comma-separated "<port>/http" or "<port>/tcp" items; not ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
      });
    out.ports = ports;
  }
  if (i.env !== undefined && i.env !== null) {
    const env = envMap(i.env, problems);
    if (env) out.env = env;
  }
  if (problems.length) throw invalid(problems);

  // The REST DTOs' own rules (name length, sizes, mount path, category...), with their messages.
  const dto = plainToInstance(mode === 'create' ? TemplateCreateDto : TemplateUpdateDto, out);
  const errors = validateSync(dto, {
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  if (errors.length)
    throw invalid(
      flattenValidationErrors(errors).map((d) => ({
        ...d,
        path: d.path === 'dockerStartCmd' ? 'dockerArgs' : d.path,
      })),
    );
  return dto as TemplateCreateDto;
}

function envMap(
  list: Array<EnvironmentVariableInput | null>,
  problems: ErrorDetail[],
): Record<string, string> | null {
  const env: Record<string, string> = {};
  list.forEach((item, n) => {
    const path = `env.${n}`;
    if (!item || typeof item.key !== 'string' || !item.key || item.key.includes('=')) {
      problems.push({
        path: `${path}.key`,
        message: `${path}.key must be a non-empty name without "="`,
      });
    } else if (typeof item.value !== 'string') {
      problems.push({
        path: `${path}.value`,
        message: `${path}.value (${item.key}) must be a string`,
      });
    } else if (Object.hasOwn(env, item.key)) {
      problems.push({ path: `${path}.key`, message: `env lists "${item.key}" twice` });
    } else {
      env[item.key] = item.value;
    }
  });
  return problems.length ? null : env;
}

function invalid(details: ErrorDetail[]): RunplaneError {
  return RunplaneError.badRequest(
    details
      .map((d) => d.message)
      .slice(0, 3)
      .join('; '),
    details,
  );
}
