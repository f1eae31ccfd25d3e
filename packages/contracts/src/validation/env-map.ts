import { Transform, Type } from 'class-transformer';

/**
 * Carries a name → value map (an env) through class-transformer whole. Left alone, it copies a
 * plain object key by key and skips `constructor`, `__proto__` and every key that shadows an
 * Object.prototype member (`toString`, `valueOf`, `hasOwnProperty`, …), and a `constructor` key
 * would even be taken for the class to build; in an env map those are ordinary variable names.
 * The map is copied from the input as sent (own keys only); validators check it afterwards.
 */
export function KeepEveryKey(): PropertyDecorator {
  return (target, property) => {
    Type(() => Object)(target, property);
    Transform(({ obj, key }) => ownCopy((obj as Record<string, unknown>)[key]), {
      toClassOnly: true,
    })(target, property);
  };
}

function ownCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value));
}
