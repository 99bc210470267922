import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod/mini';
import { docs, noMaximum, STORABLE_DOC, standIns, storableChecks } from '../schemas/doc.ts';

/** A JSON Schema (2020-12) object, as the document holds it. */
export type JsonSchema = { [k: string]: unknown };

/** Where named schemas live in the document. */
export const componentRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** The component any JSON value (`z.json()`, recursive in zod) is documented as. */
const JSON_VALUE = 'JsonValue';

/** What zod emits for `z.json()` as the definition `id`. */
const jsonValueDef = (id: string): string => {
  const self = { $ref: `#/$defs/${id}` };
  return JSON.stringify({
    anyOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
      { type: 'array', items: self },
      { type: 'object', propertyNames: { type: 'string' }, additionalProperties: self },
    ],
  });
};

const isObject = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Converts the handlers' zod schemas (requests: their input; answers: their output) to JSON
 * Schema 2020-12, the dialect of OpenAPI 3.1. A schema named in shared/schemas/doc.ts becomes a
 * component (`#/components/schemas/<id>`), referenced wherever it is used; a stand-in replaces a
 * schema that cannot describe its own input.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodMiniType, io: 'input' | 'output'): JsonSchema {
    const out = z.toJSONSchema(schema, {
      io,
      target: 'draft-2020-12',
      metadata: docs,
      cycles: 'ref',
      reused: 'inline',
      override: ({ zodSchema, jsonSchema }) => {
        if (noMaximum.has(zodSchema as unknown as z.ZodMiniType)) delete (jsonSchema as JsonSchema).maximum;
        const checks = (zodSchema as unknown as { _zod: { def: { checks?: readonly object[] } } })._zod.def.checks ?? [];
        if (checks.some((c) => storableChecks.has(c))) Object.assign(jsonSchema, STORABLE_DOC);
        const standIn = standIns.get(zodSchema as unknown as z.ZodMiniType);
        if (!standIn) return;
        const replacement = this.convert(standIn, io);
        for (const k of Object.keys(jsonSchema)) delete (jsonSchema as JsonSchema)[k];
        Object.assign(jsonSchema, replacement);
      },
    }) as JsonSchema;
    return this.hoist(out);
  }

  /** Moves the schema's `$defs` into the components and points its references there. */
  private hoist(s: JsonSchema): JsonSchema {
    const { $schema: _dialect, $defs, ...root } = s;
    const defs = (isObject($defs) ? $defs : {}) as Record<string, JsonSchema>;
    const target = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      if (!id.startsWith('__schema')) target.set(id, id);
      else if (JSON.stringify(def) === jsonValueDef(id)) target.set(id, JSON_VALUE);
      else throw new Error(`A recursive or cyclic schema has no name (${JSON.stringify(def).slice(0, 200)}): name it with named() from shared/schemas/doc.ts`);
    }
    const rewrite = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rewrite);
      if (!isObject(v)) return v;
      const out: JsonSchema = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') {
          if (x === '#') throw new Error('A recursive schema has no name: name it with named() from shared/schemas/doc.ts');
          const id = x.startsWith('#/$defs/') ? decodeURIComponent(x.slice('#/$defs/'.length)).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
          out.$ref = id !== undefined && target.has(id) ? componentRef(target.get(id) as string).$ref : x;
        } else out[k] = rewrite(x);
      }
      return out;
    };
    for (const [id, name] of target) {
      this.add(name, name === JSON_VALUE ? { description: 'Any JSON value.' } : (rewrite(defs[id]) as JsonSchema));
    }
    return rewrite(root) as JsonSchema;
  }

  private add(name: string, body: JsonSchema): void {
    const prev = this.components[name];
    if (prev && !isDeepStrictEqual(prev, body)) {
      throw new Error(`The component ${name} differs between its uses (a request's input and an answer's output?): ${JSON.stringify(prev).slice(0, 200)} vs ${JSON.stringify(body).slice(0, 200)}`);
    }
    this.components[name] = body;
  }
}
