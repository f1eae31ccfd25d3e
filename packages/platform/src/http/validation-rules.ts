import { getMetadataStorage } from 'class-validator';

type Storage = ReturnType<typeof getMetadataStorage> & {
  rulesRemembered?: true;
  /** On the storage, which is global, so that every copy of this module hears every change. */
  ruleChangeListeners?: Array<() => void>;
};

/** Calls `listener` whenever a validation rule or constraint is added (a class was defined). */
export function onValidationRulesChanged(listener: () => void): void {
  const storage = getMetadataStorage() as Storage;
  (storage.ruleChangeListeners ??= []).push(listener);
}

/**
 * class-validator looks up a class's rules by walking every class it knows (an `instanceof` per
 * class, for inherited rules) at every validation: about 2 % of a busy server's CPU, more than
 * the checks themselves. The rules of a class only change while decorators run (class
 * definition), so the lookup is remembered until any rule is added.
 */
function rememberValidationRules(): void {
  const storage = getMetadataStorage() as Storage;
  if (storage.rulesRemembered) return;
  storage.rulesRemembered = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  let remembered = new Map<unknown, Map<string, ReturnType<typeof lookup>>>();
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\0${always}\0${strictGroups}\0${(groups ?? []).join('\0')}`;
    let byOptions = remembered.get(target);
    if (!byOptions) remembered.set(target, (byOptions = new Map()));
    let rules = byOptions.get(key);
    if (!rules) {
      rules = lookup(target, schema, always, strictGroups, groups);
      // Frozen: every caller only reads the list; one that changed it would now fail loudly.
      Object.freeze(rules);
      byOptions.set(key, rules);
    }
    return rules;
  };
  for (const method of [
    'addValidationMetadata',
    'addConstraintMetadata',
    'addValidationSchema',
  ] as const) {
    const add = storage[method].bind(storage) as (arg: never) => void;
    storage[method] = (arg: never) => {
      remembered = new Map();
      add(arg);
      for (const listener of storage.ruleChangeListeners ?? []) listener();
    };
  }
}
rememberValidationRules();
