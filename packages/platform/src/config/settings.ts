import type { RunplaneConfig } from './runplane-config.js';

/**
 * Helpers for a service's own tuning variables (those only one service reads, so they are not in
 * RunplaneConfig). A bad value stops the start-up with a message naming the variable.
 */

/** The raw environment the config was loaded from (tests pass their own). */
export function environmentOf(config: RunplaneConfig): NodeJS.ProcessEnv {
  return (config as RunplaneConfig & { raw?: NodeJS.ProcessEnv }).raw ?? process.env;
}

export function intSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(
      `invalid configuration: ${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)}). See docs/configuration.md.`,
    );
  }
  return value;
}

export function boolSetting(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(
    `invalid configuration: ${name} must be true or false (got ${JSON.stringify(env[name])}). See docs/configuration.md.`,
  );
}
