import { SECRET_REFERENCE } from '@runplane/contracts';

/** Shorter values are not replaced in logs: they would mangle ordinary text. */
export const MIN_REDACTED_LENGTH = 4;

/**
 * The secret strings of a workload, to be kept out of its logs: each variable of `secretEnv`
 * (resolved secret references, worker keys) whole, plus each secret a reference resolved to when
 * the written value holds more than the reference (`postgres://u:{{ RUNPOD_SECRET_pw }}@db` gives
 * the password too). Longest first, so a value is replaced before any part of it.
 */
export function secretValues(
  written: Record<string, string>,
  secretEnv: Record<string, string>,
): string[] {
  const found = new Set<string>();
  for (const [key, value] of Object.entries(secretEnv)) {
    found.add(value);
    for (const part of referencedParts(written[key], value)) found.add(part);
  }
  return [...found]
    .filter((v) => v.length >= MIN_REDACTED_LENGTH)
    .sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each of `values` replaced by `[secret]`. */
export function redact(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) if (out.includes(value)) out = out.split(value).join('[secret]');
  return out;
}

/** What each reference of `template` stands for in `resolved` (the literal text around them matched). */
function referencedParts(template: string | undefined, resolved: string): string[] {
  if (!template) return [];
  const literals = template.split(new RegExp(SECRET_REFERENCE.source));
  // split() with a capture group interleaves the captured names: keep the literal text only.
  const text = literals.filter((_, i) => i % 2 === 0);
  if (text.length < 2) return [];
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`^${text.map(escape).join('([\\s\\S]*?)')}$`).exec(resolved);
  return match ? match.slice(1) : [];
}
