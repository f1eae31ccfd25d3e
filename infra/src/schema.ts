import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import ts from 'typescript';
import { cnpgClusterSchema } from './cnpg-cluster.schema.js';
import type { K8sObject } from './kustomize.js';

/** Where the models of an API group come from (both generated from the upstream OpenAPI schemas). */
const MODEL_PACKAGES: Array<{
  test: (apiVersion: string) => boolean;
  module: (apiVersion: string, kind: string) => string;
}> = [
  {
    test: (v) => v.startsWith('monitoring.coreos.com/'),
    module: (v, k) => `@kubernetes-models/prometheus-operator/${v}/${k}`,
  },
  {
    test: (v) => !v.includes('.') || v.includes('.k8s.io/'),
    module: (v, k) => `kubernetes-models/${v}/${k}`,
  },
];

/** Custom resources without published models: a schema of the fields Runplane uses, strict. */
const CUSTOM_SCHEMAS: Record<string, object> = {
  'postgresql.cnpg.io/v1/Cluster': cnpgClusterSchema,
};

type Model = { validate(): void };
type ModelClass = new (data: unknown) => Model;

/**
 * Validates objects against the Kubernetes OpenAPI schemas, offline:
 * - types, required fields, enums and formats through `kubernetes-models` (the API server's
 *   OpenAPI schemas compiled to validators);
 * - unknown fields (a typo such as `livenessprobe`, which the API server rejects under strict
 *   field validation and the compiled validators let through) by walking each object along the
 *   TypeScript declarations of the same models.
 */
export class SchemaValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly modelCache = new Map<string, Promise<ModelClass | undefined>>();
  private fieldIndex?: FieldIndex;
  private readonly indexed = new Set<string>();

  async validate(objects: K8sObject[]): Promise<Map<K8sObject, string[]>> {
    const problems = new Map<K8sObject, string[]>(objects.map((o) => [o, []]));
    const modelled: Array<{ object: K8sObject; module: string }> = [];
    for (const object of objects) {
      const key = `${object.apiVersion}/${object.kind}`;
      const custom = CUSTOM_SCHEMAS[key];
      if (custom) {
        const check =
          this.ajv.getSchema(key) ?? (this.ajv.addSchema(custom, key), this.ajv.getSchema(key)!);
        if (!check(object))
          problems
            .get(object)!
            .push(
              ...(check.errors ?? []).map(
                (e) =>
                  `schema: ${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
              ),
            );
        continue;
      }
      const source = MODEL_PACKAGES.find((p) => p.test(object.apiVersion));
      const Model = source
        ? await this.model(source.module(object.apiVersion, object.kind))
        : undefined;
      if (!source || !Model) {
        problems
          .get(object)!
          .push(`schema: no schema known for ${object.apiVersion} ${object.kind}`);
        continue;
      }
      try {
        new Model(object).validate();
      } catch (err) {
        problems.get(object)!.push(`schema: ${(err as Error).message}`);
      }
      modelled.push({ object, module: source.module(object.apiVersion, object.kind) });
    }
    if (modelled.length) {
      const modules = [...new Set(modelled.map((m) => m.module))];
      // One program for every kind met so far; rebuilt only when a new kind shows up.
      if (!this.fieldIndex || modules.some((m) => !this.indexed.has(m))) {
        for (const m of modules) this.indexed.add(m);
        this.fieldIndex = new FieldIndex([...this.indexed]);
      }
      const index = this.fieldIndex;
      for (const { object, module } of modelled)
        problems
          .get(object)!
          .push(...index.unknownFields(object, module).map((p) => `schema: unknown field ${p}`));
    }
    return problems;
  }

  private model(module: string): Promise<ModelClass | undefined> {
    let loaded = this.modelCache.get(module);
    if (!loaded) {
      const kind = module.slice(module.lastIndexOf('/') + 1);
      loaded = import(module).then(
        (m: Record<string, ModelClass>) => m[kind],
        () => undefined,
      );
      this.modelCache.set(module, loaded);
    }
    return loaded;
  }
}

/**
 * Knows every field of the model types: one TypeScript program over the models' declaration files,
 * built once for the modules given.
 */
class FieldIndex {
  private readonly checker: ts.TypeChecker;
  private readonly types = new Map<string, ts.Type>();

  constructor(modules: string[]) {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const virtualFile = path.join(here, '__k8s_models__.ts');
    const source =
      modules
        .map(
          (m, i) =>
            `import type { I${m.slice(m.lastIndexOf('/') + 1)} as T${i} } from '${m}';\nexport type M${i} = T${i};`,
        )
        .join('\n') + '\nexport {};\n';
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      strict: true,
    };
    const host = ts.createCompilerHost(options);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (f) => f === virtualFile || fileExists.call(host, f);
    host.readFile = (f) => (f === virtualFile ? source : readFile.call(host, f));
    host.getSourceFile = (f, lang, onError, create) =>
      f === virtualFile
        ? ts.createSourceFile(f, source, lang)
        : getSourceFile.call(host, f, lang, onError, create);
    const program = ts.createProgram([virtualFile], options, host);
    this.checker = program.getTypeChecker();
    const symbols = this.checker.getExportsOfModule(
      this.checker.getSymbolAtLocation(program.getSourceFile(virtualFile)!)!,
    );
    modules.forEach((m, i) => {
      const symbol = symbols.find((s) => s.name === `M${i}`);
      if (symbol) this.types.set(m, this.checker.getDeclaredTypeOfSymbol(symbol));
    });
  }

  /** Dotted paths of fields the model's type does not declare. */
  unknownFields(object: K8sObject, module: string): string[] {
    const type = this.types.get(module);
    if (!type) return [`(no declarations found for ${module})`];
    const out: string[] = [];
    this.walk(object, type, '', out);
    return out;
  }

  private walk(value: unknown, type: ts.Type, at: string, out: string[]): void {
    if (value === null || value === undefined || typeof value !== 'object') return;
    const candidates = (type.isUnion() ? type.types : [type]).filter(
      (t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)),
    );
    if (Array.isArray(value)) {
      const element = candidates
        .map((t) =>
          this.checker.isArrayType(t)
            ? this.checker.getTypeArguments(t as ts.TypeReference)[0]
            : undefined,
        )
        .find(Boolean);
      if (element) value.forEach((item, i) => this.walk(item, element, `${at}[${i}]`, out));
      return;
    }
    const objects = candidates.filter(
      (t) => t.flags & ts.TypeFlags.Object && !this.checker.isArrayType(t),
    );
    if (!objects.length) return;
    for (const [key, child] of Object.entries(value)) {
      const where = at ? `${at}.${key}` : key;
      const prop = objects.map((t) => t.getProperty(key)).find(Boolean);
      if (prop) {
        this.walk(child, this.checker.getTypeOfSymbol(prop), where, out);
        continue;
      }
      const index = objects.map((t) => t.getStringIndexType()).find(Boolean);
      if (index) this.walk(child, index, where, out);
      else out.push(where);
    }
  }
}
