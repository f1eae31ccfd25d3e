import {
  joinDockerArgs,
  RunplaneError,
  splitDockerArgs,
  TemplateCreateDto,
  TemplateUpdateDto,
  type ErrorDetail,
  type Template,
} from '@runplane/contracts';
import { flattenValidationErrors } from '@runplane/platform';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
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
    dockerArgs: joinDockerArgs(t.dockerStartCmd),
    containerDiskInGb: t.containerDiskInGb,
    volumeInGb: t.volumeInGb,
    volumeMountPath: t.volumeMountPath,
    ports: t.ports.join(','),
    portsConfig: t.portsConfig ?? [],
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
    startScript: '',
    advancedStart: false,
    boundEndpointId: null,
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
      out.dockerStartCmd = splitDockerArgs(i.dockerArgs);
    } catch (err) {
      problems.push(...((err as RunplaneError).details ?? []));
    }
  }
  if (i.ports !== undefined && i.ports !== null) out.ports = portList(i.ports, problems);
  if (i.portsConfig !== undefined && i.portsConfig !== null)
    out.portsConfig = i.portsConfig.map((l) => ({ port: l?.port, name: l?.name }));
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

/** GraphQL `ports`, "8888/http,22/tcp", as REST's list (problems noted for bad items). */
export function portList(ports: string, problems: ErrorDetail[]): string[] {
  const list = ports
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const bad = list.filter((p) => !PORT.test(p));
  if (bad.length)
    problems.push({
      path: 'ports',
      message: `ports must be comma-separated "<port>/http" or "<port>/tcp" items; not ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
    });
  return list;
}

/** GraphQL `env`, a `{key, value}` list, as REST's map (problems noted for bad items). */
export function envMap(
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
    } else if (item.key === '__proto__') {
      // Assigning it would set the map's prototype, not a variable; REST refuses it in any body.
      problems.push({ path: `${path}.key`, message: `${path}.key "__proto__" is not allowed` });
    } else if (Object.hasOwn(env, item.key)) {
      problems.push({ path: `${path}.key`, message: `env lists "${item.key}" twice` });
    } else {
      env[item.key] = item.value;
    }
  });
  return problems.length ? null : env;
}

export function invalid(details: ErrorDetail[]): RunplaneError {
  return RunplaneError.badRequest(
    details
      .map((d) => d.message)
      .slice(0, 3)
      .join('; '),
    details,
  );
}
