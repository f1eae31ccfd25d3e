import { TextArea } from './fields';

/** `KEY=value` lines ⇄ an env map; a line without `=` is an error naming it. */
export function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`env line ${i + 1} must be KEY=value`);
    env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return env;
}

export const formatEnv = (env: Record<string, string> | undefined) =>
  Object.entries(env ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

/** Environment variables, one `KEY=value` a line; secrets by reference. */
export function EnvEditor({ value, onChange }: { value: string; onChange(value: string): void }) {
  return (
    <TextArea
      label="Environment (KEY=value, one a line)"
      value={value}
      onChange={onChange}
      hint="A secret goes in by reference: HF_TOKEN={{ RUNPOD_SECRET_hf_token }} (resolved only when a worker starts)."
    />
  );
}
