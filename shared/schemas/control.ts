import * as z from 'zod/mini';
import { between, displayName, intBetween, intOf, kindOf, limitParam, missingOr, numericId, POSITIVE_INT_PATTERN, recordDescription, STORABLE_RANGE_DOC, storableNumber } from './common.ts';
import { documentAs, documentChecks, named } from './doc.ts';
import { NotFound } from '../domain/errors.ts';
import type { SegmentDefinition } from '../control/types.ts';

/*
 * Platform API bodies and queries of the control plane: rules, segments, experiments, rerank
 * controls and the audit trail. Field errors name the field (`conditions.0.op`).
 */

const name = displayName;
const description = recordDescription;
/** A record's id: z.int's own bound (2^53 - 1) is its upper one (`intOf`). */
const positiveId = (field: string) => intOf(field, 'an integer', `${field} must be a positive integer`, `${field} is out of range`).check(z.positive(`${field} must be a positive integer`));
const seconds = (field: string) =>
  intOf(field, 'an integer (Unix seconds)', `${field} must be Unix seconds`, `${field} must be Unix seconds, not milliseconds`).check(
    z.gte(0, `${field} must be Unix seconds`),
    z.lte(99_999_999_999, `${field} must be Unix seconds, not milliseconds`),
  );
const atLeastOne = z.refine<object>((b) => Object.keys(b).length > 0, 'Supply at least one field.');

// Rules

/** `category`, `name`, `created`, or `metadata.<key>` up to 8 keys deep. */
export const CONDITION_FIELD = /^(category|name|created|metadata(\.[A-Za-z0-9_-]{1,64}){1,8})$/;
// A number's bounds documented (until 2026-12-08 the document took any number, 1e20 included, which is 400).
const scalarNumber = documentChecks(storableNumber('value'), { minimum: -Number.MAX_SAFE_INTEGER, ...STORABLE_RANGE_DOC });
const scalar = z.union([z.string().check(z.maxLength(1000, 'a value must be at most 1000 characters')), scalarNumber, z.boolean()], { error: 'value must be a string, number or boolean' });

const condition = z
  .strictObject({
    field: z
      .string({ error: kindOf('field', 'a string') })
      .check(z.regex(CONDITION_FIELD, 'field must be category, name, created or metadata.<key>[.<key>...] (keys of 1-64 letters, digits, _ or -, at most 8 deep)')),
    op: z.enum(['eq', 'neq', 'in', 'gte', 'lte', 'exists'], { error: missingOr('op is required', 'op must be one of eq, neq, in, gte, lte, exists') }),
    // Every op takes one (`exists` true or false): required, as the OpenAPI document says.
    // A list's length is checked with the op below (a union's message would name the kinds only); documented as it is.
    value: documentAs(
      z.union([scalar, z.array(scalar)], { error: missingOr('value is required', 'value must be a string, number, boolean or a list of them') }),
      z.union([scalar, z.array(scalar).check(z.minLength(1), z.maxLength(100))]),
    ),
  })
  .check(
    z.superRefine((c, ctx) => {
      // Every item has a `created` (Unix seconds) and a `name` (a string): a value of another
      // kind, or `exists: false`, could never match (until 2026-12-05 those on `name` were stored).
      const kind = c.field === 'created' ? 'number' : c.field === 'name' ? 'string' : undefined;
      const what = c.field === 'created' ? 'whole numbers (Unix seconds)' : 'strings';
      // created is whole seconds: a fraction is never equal to one (until 2026-12-05 it was stored).
      const wrongKind = (v: unknown) => kind !== undefined && (typeof v !== kind || (kind === 'number' && !Number.isInteger(v)));
      const problem =
        c.op === 'in'
          ? !Array.isArray(c.value)
            ? 'value must be a list for op in'
            : c.value.length === 0
              ? 'an in list must not be empty'
              : c.value.length > 100
                ? 'an in list holds at most 100 values'
                : c.value.some(wrongKind) && `the values of ${c.field} must be ${what}`
          : c.op === 'gte' || c.op === 'lte'
            ? kind === 'string'
              ? `name is a string: ${c.op} compares numbers`
              : typeof c.value !== 'number' && `value must be a number for ${c.op}${kind ? ' (Unix seconds)' : ''}`
            : c.op === 'exists'
              ? typeof c.value !== 'boolean'
                ? 'value must be true or false for exists'
                : kind !== undefined && c.value === false && `every item has a ${c.field}: exists false never matches`
              : c.value === undefined || Array.isArray(c.value)
                ? `value must be a single string, number or boolean for ${c.op}`
                : wrongKind(c.value) && `value must be ${kind === 'number' ? 'a whole number' : 'a string'} for ${c.op} on ${c.field}${kind === 'number' ? ' (Unix seconds)' : ''}`;
      if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem, input: c.value });
    }),
  );
/**
 * What a rule's conditions, or a segment's definition, may take as JSON: each limit of their
 * parts holds, yet 20 conditions of 100 values of 1,000 characters (or 10,000 segment leaves)
 * would pass DynamoDB's 400 KB per item, and the audit trail keeps a record twice (before and
 * after). 64 KB is hundreds of conditions' worth of ordinary values.
 */
export const MAX_RULE_PART_BYTES = 65_536;
const jsonBytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
const tooLarge = (what: string) => `${what} must serialise to at most 65,536 bytes of JSON`;
const fitsRecord = (what: string) => z.refine((v: unknown) => jsonBytes(v) <= MAX_RULE_PART_BYTES, tooLarge(what));
const conditions = z.array(condition, { error: kindOf('conditions', 'a list') }).check(z.maxLength(20, 'a rule has at most 20 conditions'), fitsRecord('conditions'));
const boost = storableNumber('boost').check(z.gte(0, 'boost must be at least 0 (0 excludes)'), z.lte(1000, 'boost must be at most 1000'));
type Window = { starts_at?: number | null | undefined; ends_at?: number | null | undefined };
const validity = (b: Window) => b.starts_at === undefined || b.starts_at === null || b.ends_at === undefined || b.ends_at === null || b.ends_at > b.starts_at;
const validityCheck = z.refine<Window>(validity, { message: 'ends_at must be after starts_at', path: ['ends_at'] });

const ruleFields = {
  name,
  context_id: positiveId('context_id'),
  conditions,
  boost,
  segment_id: z.optional(z.nullable(positiveId('segment_id'))),
  starts_at: z.optional(z.nullable(seconds('starts_at'))),
  ends_at: z.optional(z.nullable(seconds('ends_at'))),
  enabled: z.optional(z.boolean({ error: 'enabled must be true or false' })),
};
export const ruleBody = z.strictObject(ruleFields).check(validityCheck);
export type RuleBody = z.output<typeof ruleBody>;
export const rulePatch = documentChecks(
  z
    .strictObject({
      name: z.optional(ruleFields.name),
      context_id: z.optional(ruleFields.context_id),
      conditions: z.optional(conditions),
      boost: z.optional(boost),
      segment_id: ruleFields.segment_id,
      starts_at: ruleFields.starts_at,
      ends_at: ruleFields.ends_at,
      enabled: ruleFields.enabled,
    })
    .check(atLeastOne, validityCheck),
  { minProperties: 1 },
);
export type RulePatch = z.output<typeof rulePatch>;

// Segments

const MAX_SEGMENT_NESTING = 4;
const leaf = z.strictObject({
  event_type: z.string({ error: kindOf('event_type', 'a string') }).check(z.regex(/^[a-z][a-z0-9_]{0,63}$/, 'event_type must match ^[a-z][a-z0-9_]{0,63}$ (the type string sent in events)')),
  min_count: intOf('min_count', 'an integer', 'min_count must be at least 1', 'min_count must be at most 500').check(
    z.gte(1, 'min_count must be at least 1'),
    z.lte(500, 'min_count must be at most 500'),
  ),
  within_days: intOf('within_days', 'an integer', 'within_days must be at least 1', 'within_days must be at most 365').check(
    z.gte(1, 'within_days must be at least 1'),
    z.lte(365, 'within_days must be at most 365'),
  ),
});
const children = z.array(z.unknown(), { error: 'must be a list of definitions' }).check(z.minLength(1, 'must hold 1 to 10 definitions'), z.maxLength(10, 'must hold 1 to 10 definitions'));
const allOf = z.strictObject({ all: children });
const anyOf = z.strictObject({ any: children });

/**
 * Checks a definition node at `path` (`depth` combinators above it), reporting each problem at
 * its own path; the definition as stored, or undefined when it is not valid.
 */
function checkDefinition(v: unknown, path: PropertyKey[], depth: number, issues: { path: PropertyKey[]; message: string }[]): SegmentDefinition | undefined {
  const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
  const key = isObject && Object.hasOwn(v, 'all') ? 'all' : isObject && Object.hasOwn(v, 'any') ? 'any' : undefined;
  if (!key) {
    // Not sent (a definition within all / any always is): told so, not the kind it must be, as other fields are (kindOf).
    if (v === undefined) {
      issues.push({ path, message: 'definition is required' });
      return undefined;
    }
    if (!isObject) {
      issues.push({ path, message: 'a definition is an object: { event_type, min_count, within_days }, { all: [...] } or { any: [...] }' });
      return undefined;
    }
    const r = leaf.safeParse(v);
    if (r.success) return r.data;
    for (const i of r.error.issues) {
      if (i.code === 'unrecognized_keys') for (const k of i.keys) issues.push({ path: [...path, k], message: 'Unknown field.' });
      else issues.push({ path: [...path, ...i.path], message: i.message });
    }
    return undefined;
  }
  if (depth >= MAX_SEGMENT_NESTING) {
    issues.push({ path, message: `definitions nest at most ${MAX_SEGMENT_NESTING} levels of all/any` });
    return undefined;
  }
  const r = (key === 'all' ? allOf : anyOf).safeParse(v);
  if (!r.success) {
    for (const i of r.error.issues) {
      if (i.code === 'unrecognized_keys') for (const k of i.keys) issues.push({ path: [...path, k], message: `Unknown field (a definition has ${key} alone).` });
      else issues.push({ path: [...path, ...i.path], message: i.message });
    }
    return undefined;
  }
  const list = (r.data as Record<string, unknown[]>)[key] as unknown[];
  const out = list.map((c, n) => checkDefinition(c, [...path, key, n], depth + 1, issues));
  if (out.some((c) => c === undefined)) return undefined;
  return (key === 'all' ? { all: out } : { any: out }) as SegmentDefinition;
}

/** A definition as documented (and answered): a leaf, or all / any of 1 to 10 definitions, nesting at most 4 deep. */
export const segmentDefinitionShape: z.ZodMiniType<SegmentDefinition> = named(
  'SegmentDefinition',
  z.union([
    leaf,
    z.strictObject({ all: z.array(z.lazy(() => segmentDefinitionShape)).check(z.minLength(1), z.maxLength(10)) }),
    z.strictObject({ any: z.array(z.lazy(() => segmentDefinitionShape)).check(z.minLength(1), z.maxLength(10)) }),
  ]),
  `Users with at least min_count events of event_type within the last within_days days; or all / any of 1 to 10 definitions (at most ${MAX_SEGMENT_NESTING} levels of all / any).`,
);

/** Dispatching on the shape (not a union) keeps field errors precise: `definition.all.1.min_count`. */
export const segmentDefinition = documentAs(
  z.pipe(
    z.unknown(),
    z.transform((v: unknown, ctx): SegmentDefinition => {
      const issues: { path: PropertyKey[]; message: string }[] = [];
      const def = checkDefinition(v, [], 0, issues);
      if (def && jsonBytes(def) > MAX_RULE_PART_BYTES) issues.push({ path: [], message: tooLarge('definition') });
      else if (def) return def;
      for (const i of issues) ctx.issues.push({ code: 'custom', path: i.path, message: i.message, input: v });
      return z.NEVER;
    }),
  ),
  segmentDefinitionShape,
);

export const segmentBody = z.strictObject({ name, description: z.optional(description), definition: segmentDefinition });
export type SegmentBody = z.output<typeof segmentBody>;
export const segmentPatch = documentChecks(z.strictObject({ name: z.optional(name), description: z.optional(description), definition: z.optional(segmentDefinition) }).check(atLeastOne), {
  minProperties: 1,
});
export type SegmentPatch = z.output<typeof segmentPatch>;

// Rerank controls

/** A control left out or null is unset (GET shows an unset control as null). */
const control = <T>(schema: z.ZodMiniType<T>) =>
  z.optional(
    z.pipe(
      z.nullable(schema),
      z.transform((v: T | null) => v ?? undefined),
    ),
  );
const rerankFields = {
  diversity: control(storableNumber('diversity').check(...between('diversity', 0, 1))),
  popularity_weight: control(storableNumber('popularity_weight').check(...between('popularity_weight', 0, 10))),
  freshness_weight: control(storableNumber('freshness_weight').check(...between('freshness_weight', 0, 10))),
  max_per_category: control(intBetween('max_per_category', 1, 100)),
  exclude_seen: control(z.boolean({ error: 'exclude_seen must be true or false' })),
};
/**
 * `PUT /api/rerank-controls`: the whole set (a control left out or null is unset). What GET
 * answers may be sent back: its `context_id` (the query's, else 400) and `updated_at` (set by
 * the service) are accepted beside the controls.
 */
export const rerankBody = z.strictObject({
  ...rerankFields,
  context_id: z.optional(positiveId('context_id')),
  updated_at: z.optional(z.nullable(z.number({ error: 'updated_at must be a number (it is set by the service)' }))),
});
export type RerankBody = z.output<typeof rerankBody>;
/** A context id past any a record can have: the 404 an unknown context answers. */
const noContext = (digits: string) => new NotFound('context_not_found', `No context ${digits}.`);
export const rerankQuery = z.strictObject({
  contextId: documentAs(z.pipe(z.string({ error: 'contextId is required: the numeric id of a context' }), numericId('contextId', noContext)), z.string().check(z.regex(POSITIVE_INT_PATTERN))),
});

// Experiments

const hundredths = (n: number) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6;
const variant = z.strictObject({
  name: z.string({ error: kindOf('name', 'a string') }).check(z.regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/, '1-64 letters, digits, spaces, _, . or -')),
  endpoint_name: z.string({ error: kindOf('endpoint_name', 'a string') }).check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, '1-64 letters, digits, _ or -')),
  traffic_percent: z.number({ error: kindOf('traffic_percent', 'a number') }).check(
    z.gte(0.01, 'traffic_percent must be above 0 (at least 0.01)'),
    z.lte(100, 'traffic_percent must be at most 100'),
    z.refine(hundredths, 'traffic_percent has at most 2 decimals'),
    // Kept as the hundredths it stands for: a share a client computed (100 - 8.04 is
    // 91.96000000000001 in binary floating point) was stored and shown so (until 2026-12-06).
    z.overwrite((n: number) => Math.round(n * 100) / 100),
  ),
  // null is no controls of its own, as a control left out or null is unset (PUT /api/rerank-controls).
  rerank: control(z.strictObject(rerankFields)),
});
const variants = z.array(variant, { error: kindOf('variants', 'a list') }).check(
  z.minLength(2, 'an experiment has 2 to 10 variants'),
  z.maxLength(10, 'an experiment has 2 to 10 variants'),
  z.superRefine((vs, ctx) => {
    const seen = new Set<string>();
    vs.forEach((v, n) => {
      if (seen.has(v.name)) ctx.addIssue({ code: 'custom', path: [n, 'name'], message: `variant names must be unique (${v.name} repeats)`, input: v.name });
      seen.add(v.name);
    });
    const sum = vs.reduce((s, v) => s + v.traffic_percent, 0);
    if (Math.abs(sum - 100) > 0.001) ctx.addIssue({ code: 'custom', path: [], message: `traffic_percent must sum to 100 (they sum to ${Math.round(sum * 1000) / 1000})`, input: vs });
  }),
);
const attributionWindow = intOf('attribution_window_seconds', 'an integer', 'attribution_window_seconds must be 60 to 2592000 (30 days)').check(
  z.gte(60, 'attribution_window_seconds must be 60 to 2592000 (30 days)'),
  z.lte(2_592_000, 'attribution_window_seconds must be 60 to 2592000 (30 days)'),
);
export const DEFAULT_ATTRIBUTION_WINDOW = 86_400;

export const experimentBody = z.strictObject({
  name,
  context_id: positiveId('context_id'),
  segment_id: z.optional(z.nullable(positiveId('segment_id'))),
  variants,
  attribution_window_seconds: z._default(z.optional(attributionWindow), DEFAULT_ATTRIBUTION_WINDOW),
});
export type ExperimentBody = z.output<typeof experimentBody>;
export const experimentPatch = documentChecks(
  z
    .strictObject({
      name: z.optional(name),
      status: z.optional(z.enum(['Running', 'Stopped'], { error: 'status must be Running or Stopped' })),
      attribution_window_seconds: z.optional(attributionWindow),
      variants: z.optional(variants),
      /** While a Draft (as its variants): a segment, or null for everyone. */
      segment_id: z.optional(z.nullable(positiveId('segment_id'))),
    })
    .check(atLeastOne),
  { minProperties: 1 },
);
export type ExperimentPatch = z.output<typeof experimentPatch>;

// Lists and paths

const startingAfter = z.optional(numericId('starting_after'));
export const pageQuery = z.strictObject({ limit: limitParam, starting_after: startingAfter });
export type PageQuery = z.output<typeof pageQuery>;
/** Rules and experiments: optionally one context's. */
type ContextPageFields = { starting_after?: string | undefined; contextId?: number | undefined };
export const contextPageQuery = z
  .strictObject({
    limit: limitParam,
    /** The `next_cursor` of the page before: the last id without `contextId`; with it, opaque, naming the context (shared/data/console.ts). Until 2026-12-07 an id there too. */
    // Documented as what either kind of cursor takes (until 2026-12-08 any string, `?starting_after=` included, which is 400 either way).
    starting_after: documentAs(
      z.optional(z.string()),
      // Without contextId the last id of the page before (any digits); with it, that context's opaque next_cursor.
      z.optional(z.union([z.string().check(z.regex(POSITIVE_INT_PATTERN)), z.string().check(z.minLength(1), z.maxLength(512))])),
    ),
    contextId: z.optional(numericId('contextId', noContext)),
  })
  .check(
    // Without contextId an id, refused as the other lists refuse one (`numericId`: any digits, those
    // past the largest id an empty page); until the review of 575daa2b it was 'Invalid cursor.' and
    // 513 digits or more a 400. With it, a cursor of at most 512 characters.
    z.refine<ContextPageFields>((q) => q.contextId !== undefined || q.starting_after === undefined || POSITIVE_INT_PATTERN.test(q.starting_after), {
      message: 'starting_after must be a positive integer',
      path: ['starting_after'],
    }),
    z.refine<ContextPageFields>((q) => q.contextId === undefined || q.starting_after === undefined || (q.starting_after.length >= 1 && q.starting_after.length <= 512), {
      message: 'starting_after must be the next_cursor of the page before (1 to 512 characters)',
      path: ['starting_after'],
    }),
  );
export type ContextPageQuery = z.output<typeof contextPageQuery>;

/**
 * `resource=rules/12`: a record kind and its id, any positive integer (the spec's range is x >= 1).
 * One past the largest id a record can have is well formed and names none: its trail is empty.
 * Credentials by their own ids: `clients/<client_id>` and `api-keys/<prefix>` (as their DELETE
 * paths take them).
 */
export const AUDIT_RESOURCE = /^((rules|segments|experiments|rerank-controls|synonyms|model-endpoints)\/[1-9][0-9]*|clients\/[A-Za-z0-9]{1,128}|api-keys\/[a-z0-9]{8})$/;
export const auditQuery = z.strictObject({
  resource: z
    .string({ error: 'resource is required, e.g. rules/12' })
    .check(
      z.regex(
        AUDIT_RESOURCE,
        'resource must be rules/<id>, segments/<id>, experiments/<id>, rerank-controls/<contextId>, synonyms/<id>, model-endpoints/<id>, clients/<client_id> or api-keys/<prefix>',
      ),
    ),
  limit: limitParam,
  /** The `next_cursor` of the page before: opaque, naming the trail it is of (shared/data/console.ts). Until 2026-12-07 an entry id. */
  starting_after: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
});
export type AuditQuery = z.output<typeof auditQuery>;
