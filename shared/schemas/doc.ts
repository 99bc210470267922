import * as z from 'zod/mini';

/*
 * How schemas are documented (the OpenAPI document, shared/openapi/): names and descriptions,
 * and stand-ins for the few request schemas whose own definition cannot say what they accept.
 * Nothing here changes what a schema parses.
 */

/**
 * JSON Schema metadata: `id` makes a schema a named component of the document; the rest is
 * written into the schema's JSON Schema as it is (what a refinement checks and JSON Schema can say).
 */
export const docs = z.registry<{ id?: string; description?: string } & DocumentedChecks>();

/** What a refinement checks that JSON Schema can say: counts of properties, distinct items, exactly one of some fields. */
export interface DocumentedChecks {
  /** A refinement refuses the empty string (a synonym must hold a word); `description` says the rest. */
  minLength?: number;
  /** A refinement's bounds on a number (what DynamoDB can store: magnitudes up to 2^53 - 1). */
  minimum?: number;
  maximum?: number;
  description?: string;
  minProperties?: number;
  maxProperties?: number;
  uniqueItems?: boolean;
  /** What a refinement refuses that a pattern or list can say (control characters; `.` and `..` as a user id). */
  not?: { pattern: string } | { enum: readonly string[] };
  /** Exactly one of these alternatives holds (`[{ required: ['every'] }, { required: ['every_hours'] }]`: one of two fields). */
  oneOf?: readonly { required: readonly string[] }[];
}

/** `schema`, documented as the component `id`. */
export function named<S extends z.ZodMiniType>(id: string, schema: S, description?: string): S {
  docs.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
}

/** `schema`, documented with what its refinements check too (`minLength`, `minProperties`, `maxProperties`, `uniqueItems`, `oneOf`, in words `description`): merged with its name, if any. */
export function documentChecks<S extends z.ZodMiniType>(schema: S, checks: DocumentedChecks): S {
  docs.add(schema, { ...docs.get(schema), ...checks });
  return schema;
}

/**
 * Stand-ins: a schema that takes unknown input and dispatches on its shape (for precise field
 * errors) has no JSON Schema of its own input; it is documented as the schema given here, the
 * union of what it accepts, built from the same parts.
 */
export const standIns = new WeakMap<z.ZodMiniType, z.ZodMiniType>();

export function documentAs<S extends z.ZodMiniType>(schema: S, standIn: z.ZodMiniType): S {
  standIns.set(schema, standIn);
  return schema;
}

/**
 * Integer schemas documented without a maximum: `z.int()` states the largest exact integer
 * (2^53 - 1) as its maximum, which a parameter that reads any larger value as that one (the spec's
 * `created_after`, `created_before`) does not hold; a client checking the document refused them.
 */
export const noMaximum = new WeakSet<z.ZodMiniType>();

/** `schema` (an integer), documented without z.int()'s maximum: it takes any larger integer too. */
export function documentUnboundedAbove<S extends z.ZodMiniType>(schema: S): S {
  noMaximum.add(schema);
  return schema;
}

/**
 * The refinement of a number DynamoDB can store (0, or a magnitude from 1e-130 to 2^53 - 1:
 * `unstorable`), documented wherever a schema holds it: no magnitude below 1e-130 but 0
 * (`STORABLE_DOC`). Until the review of ea229bea the document took 1e-131 (and 5e-324) for every
 * such number (a rule's boost, a template's thresholds, a training learning_rate, ...), which is 400.
 */
export const storableChecks = new WeakSet<object>();

/** What a `storableChecks` refinement refuses, as JSON Schema says it: a non-zero magnitude below 1e-130. */
export const STORABLE_DOC = { not: { exclusiveMinimum: -1e-130, exclusiveMaximum: 1e-130, not: { const: 0 } } } as const;

/** `check` (the storable-number refinement), documented as `STORABLE_DOC` on every schema that holds it. */
export function documentStorable<C extends object>(check: C): C {
  storableChecks.add(check);
  return check;
}
