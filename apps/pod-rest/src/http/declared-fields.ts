import { getMetadataStorage } from 'class-validator';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class tokens, typed as Nest and class-validator type them
const cache = new Map<Function, ReadonlySet<string>>();

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class tokens, typed as Nest and class-validator type them
function declared(cls: Function): ReadonlySet<string> {
  let names = cache.get(cls);
  if (!names) {
    names = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(cls, '', true, false)
        .map((m) => m.propertyName),
    );
    cache.set(cls, names);
  }
  return names;
}

/**
 * The fields of a validated body that its DTO declares: unknown fields are ignored (RunPod clients
 * send extras) rather than forwarded to the owning service. `null` means "not given" except for
 * the fields listed in `nullable`, where it clears the value.
 */
export function declaredFields<T extends object>(
  cls: new () => T,
  body: T,
  nullable: ReadonlyArray<keyof T> = [],
): T {
  const names = declared(cls);
  return Object.fromEntries(
    Object.entries(body ?? {}).filter(
      ([k, v]) =>
        names.has(k) && v !== undefined && (v !== null || nullable.includes(k as keyof T)),
    ),
  ) as T;
}
