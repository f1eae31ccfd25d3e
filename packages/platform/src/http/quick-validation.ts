import {
  getMetadataStorage,
  type ValidationArguments,
  type ValidatorOptions,
} from 'class-validator';
import { onValidationRulesChanged } from './validation-rules.js';

/**
 * class-validator's verdict on an object, without its machinery, when the object is valid.
 *
 * class-validator builds an error object per property, groups the rules of the class again and
 * walks them through several filters at every call: on a busy `/run` intake its `validate` was
 * about a tenth of the server's CPU, for DTOs of a few fields whose checks themselves cost little.
 * Here the rules of a class are read once into a plan, and an object is checked by calling the
 * same validator functions class-validator would call, in the same conditions. The answer is only
 * "valid" or "ask class-validator": a failed check, an unknown property under `whitelist`, a rule
 * kind or an option this does not follow, or an asynchronous validator all defer to class-validator,
 * which then produces the errors (and their messages) as before. So a valid object costs one walk
 * over its rules, and an invalid one costs both walks.
 *
 * It follows ValidationExecutor (class-validator 0.15): per declared property, the conditions
 * (`IsOptional`, `ValidateIf`) first, then `IsDefined`, the custom validations (every built-in
 * decorator is one; `each` over arrays, sets and maps), then nested validation.
 */
export function passesQuickly(object: object, options: ValidatorOptions | undefined): boolean {
  if (!followed(options)) return false;
  return objectPasses(object, options?.whitelist === true);
}

/** Options under which this gives class-validator's verdict; any other defers to it. */
function followed(options: ValidatorOptions | undefined): boolean {
  if (!options) return false;
  return (
    options.forbidUnknownValues === false &&
    !options.groups?.length &&
    !options.always &&
    !options.strictGroups &&
    !options.skipMissingProperties &&
    !options.skipUndefinedProperties &&
    !options.skipNullProperties &&
    // Without forbidNonWhitelisted, whitelist strips properties: a change, not a verdict.
    (!options.whitelist || options.forbidNonWhitelisted === true)
  );
}

type Metadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']
>[number];

interface Check {
  metadata: Metadata;
  validators: Array<{ validate(value: unknown, args?: ValidationArguments): unknown }>;
}

interface PropertyPlan {
  name: string;
  conditions: Metadata[];
  defined: Check[];
  checks: Check[];
  nested: boolean;
}

/** A class's rules as checks, or null when one of them is of a kind this does not follow. */
interface Plan {
  properties: PropertyPlan[];
  declared: Set<string>;
}

/** Per class; forgotten whenever a rule is added anywhere (a class defined later may inherit). */
let plans = new WeakMap<object, Plan | null>();
onValidationRulesChanged(() => {
  plans = new WeakMap();
});

function planFor(target: object): Plan | null {
  let plan = plans.get(target);
  if (plan === undefined) {
    const storage = getMetadataStorage();
    const rules = storage.getTargetValidationMetadatas(
      target as new () => unknown,
      undefined as unknown as string,
      false,
      false,
    );
    plan = buildPlan(rules, storage);
    plans.set(target, plan);
  }
  return plan;
}

function buildPlan(
  rules: readonly Metadata[],
  storage: ReturnType<typeof getMetadataStorage>,
): Plan | null {
  const byProperty = new Map<string, PropertyPlan>();
  for (const metadata of rules) {
    let property = byProperty.get(metadata.propertyName);
    if (!property) {
      property = {
        name: metadata.propertyName,
        conditions: [],
        defined: [],
        checks: [],
        nested: false,
      };
      byProperty.set(metadata.propertyName, property);
    }
    const check = (): Check | null => {
      const validators = storage.getTargetValidatorConstraints(metadata.constraintCls);
      if (validators.some((v) => v.async)) return null;
      return { metadata, validators: validators.map((v) => v.instance) };
    };
    switch (metadata.type) {
      case 'conditionalValidation':
        property.conditions.push(metadata);
        break;
      case 'isDefined':
      case 'customValidation': {
        const made = check();
        if (!made) return null;
        (metadata.type === 'isDefined' ? property.defined : property.checks).push(made);
        break;
      }
      case 'nestedValidation':
        property.nested = true;
        break;
      case 'whitelistValidation':
        break; // `Allow`: declares the property, checks nothing
      default:
        return null; // promise validation, or a kind added after 0.15
    }
  }
  return { properties: [...byProperty.values()], declared: new Set(byProperty.keys()) };
}

function objectPasses(object: object, whitelist: boolean): boolean {
  // An object without a class (Object.create(null)) is class-validator's to judge.
  if (typeof object.constructor !== 'function') return false;
  const plan = planFor(object.constructor);
  if (!plan) return false;
  if (whitelist) for (const key of Object.keys(object)) if (!plan.declared.has(key)) return false;
  const record = object as Record<string, unknown>;
  for (const property of plan.properties) {
    const value = record[property.name];
    if (!conditionsHold(object, value, property.conditions)) continue;
    if (!checksPass(object, value, property.defined)) return false;
    if (!checksPass(object, value, property.checks)) return false;
    if (property.nested && !nestedPasses(value, whitelist)) return false;
  }
  return true;
}

type Condition = (object: object, value: unknown) => boolean;

/** `IsOptional`, `ValidateIf`: when one is false, the property is not checked at all. */
function conditionsHold(object: object, value: unknown, conditions: Metadata[]): boolean {
  for (const condition of conditions)
    if (!(condition.constraints[0] as Condition)(object, value)) return false;
  return true;
}

function checksPass(object: object, value: unknown, checks: Check[]): boolean {
  for (const { metadata, validators } of checks) {
    if (metadata.validateIf && !metadata.validateIf(object, value)) continue;
    const args: ValidationArguments = {
      targetName: object.constructor?.name,
      property: metadata.propertyName,
      object,
      value,
      constraints: metadata.constraints,
    };
    const each =
      metadata.each && (Array.isArray(value) || value instanceof Set || value instanceof Map);
    for (const validator of validators) {
      if (!each) {
        if (!isValid(validator.validate(value, args))) return false;
        continue;
      }
      for (const item of value instanceof Map ? value.values() : (value as Iterable<unknown>))
        if (!isValid(validator.validate(item, args))) return false;
    }
  }
  return true;
}

/** A validator's answer that class-validator takes as valid: truthy and not a promise. */
function isValid(answer: unknown): boolean {
  if (answer === true) return true;
  const promise =
    answer !== null &&
    typeof answer === 'object' &&
    typeof (answer as Promise<unknown>).then === 'function';
  return !promise && Boolean(answer);
}

/**
 * ValidateNested: an object is checked by its own class's rules; the items of an array, set or
 * map each like the value itself (an undefined one passes, as in class-validator).
 */
function nestedPasses(value: unknown, whitelist: boolean): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value) || value instanceof Set || value instanceof Map) {
    for (const item of value instanceof Set ? value : value.values())
      if (!nestedPasses(item, whitelist)) return false;
    return true;
  }
  return value instanceof Object && objectPasses(value, whitelist);
}
