import type { Type } from '@nestjs/common';
import { KEPT_AS_SENT } from '@runplane/contracts';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { IS_URL, validateSync } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import type { IOptions } from 'class-validator-jsonschema/build/options.js';

/** A JSON schema as it appears in the OpenAPI document (3.1: JSON Schema 2020-12). */
export type JsonSchema = Record<string, unknown>;

const SCHEMA_OPTIONS: Partial<IOptions> = {
  refPointerPrefix: '#/components/schemas/',
  classTransformerMetadataStorage: defaultMetadataStorage,
  additionalConverters: {
    // Custom decorators of @runplane/contracts, by their class-validator name.
    isStringMap: { type: 'object', additionalProperties: { type: 'string' } },
    // A rule on the value only (no NUL), nothing the schema can say; without a converter it
    // would become a `$ref` to the design type (`Array` for `each`).
    hasNoNul: {},
    // A marker for the validation pipe (the value is passed on as sent): the schema says nothing.
    [KEPT_AS_SENT]: {},
    [IS_URL]: { type: 'string', format: 'uri' },
  },
};

/**
 * JSON schemas of class-validator DTOs (request bodies and query objects), read from the same
 * decorators the ValidationPipe enforces: `name → schema` for `root` and every class it nests
 * through `@ValidateNested() @Type(() => X)`. Two different classes with one name are an error
 * (the document keys schemas by class name).
 */
export function dtoSchemas(
  root: Type<unknown>,
  into = new Map<string, { type: Type<unknown>; schema: JsonSchema }>(),
): Map<string, { type: Type<unknown>; schema: JsonSchema }> {
  const known = into.get(root.name);
  if (known) {
    if (known.type !== root)
      throw new Error(
        `two request classes are named ${root.name}; rename one (OpenAPI schemas are keyed by class name)`,
      );
    return into;
  }
  const schema = targetConstructorToSchema(root, SCHEMA_OPTIONS) as JsonSchema;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const property of Object.values(properties)) {
    // class-validator-jsonschema leaves `type: object` next to a nested `$ref`: the ref says it all.
    if (property.$ref) delete property.type;
    // @IsObject() on a plain map reflects its design type as a `$ref` to "Object".
    if (property.$ref === '#/components/schemas/Object') delete property.$ref;
  }
  const required = requiredProperties(root);
  const entry = { type: 'object', properties, ...(required.length ? { required } : {}) };
  into.set(root.name, { type: root, schema: entry });
  for (const name of Object.keys(properties)) {
    const nested = defaultMetadataStorage.findTypeMetadata(root, name)?.typeFunction();
    if (typeof nested === 'function' && nested !== Object)
      dtoSchemas(nested as Type<unknown>, into);
  }
  return into;
}

/**
 * What the validator itself requires: the properties an empty object is refused for. Asking
 * class-validator (instead of reading `@IsOptional()` off the metadata) gets `@ValidateIf`
 * overrides and inherited optionality right (e.g. `TemplateCreateDto.name`).
 */
function requiredProperties(type: Type<unknown>): string[] {
  const errors = validateSync(new (type as new () => object)(), {
    forbidUnknownValues: false,
    stopAtFirstError: true,
  });
  return errors.map((e) => e.property).sort();
}
