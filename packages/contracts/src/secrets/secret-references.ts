/**
 * Secret references in template env values:
 * `{{ RUNPOD_SECRET_<name> }}`, spaces inside the braces optional. A reference may be the whole
 * value or part of it (`Bearer {{ RUNPOD_SECRET_token }}`). Resolved only when a worker or Pod
 * starts; templates and Pods keep the reference as written.
 */
export const SECRET_REFERENCE = /\{\{\s*RUNPOD_SECRET_([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The distinct secret names an env map references, sorted. */
export function secretNamesIn(env: Record<string, string>): string[] {
  const names = new Set<string>();
  for (const value of Object.values(env)) {
    for (const match of value.matchAll(SECRET_REFERENCE)) names.add(match[1]);
  }
  return [...names].sort();
}

/** The env with every reference replaced by `values[name]`; names missing from `values` are left as written. */
export function substituteSecrets(
  env: Record<string, string>,
  values: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    // A function replacement: `$` sequences in secret values are taken literally.
    out[key] = value.replace(SECRET_REFERENCE, (whole, name: string) =>
      Object.hasOwn(values, name) ? values[name] : whole,
    );
  }
  return out;
}
