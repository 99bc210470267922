import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { ValidationError, type FieldErrors } from '../errors.ts';
import { documentAs, documentChecks, documentStorable, documentUnboundedAbove, named } from './doc.ts';

/** What a number too large for JSON.parse (`1e400`, read as Infinity) is told, where a number is asked for. */
export const OUT_OF_RANGE = 'Must be a finite number: one beyond about 1.8e308 (such as 1e400) is out of range';

/** A number JSON.parse read as Infinity, alone or in a list. */
export const holdsInfinity = (v: unknown): boolean => (typeof v === 'number' ? !Number.isFinite(v) : Array.isArray(v) && v.some((x) => typeof x === 'number' && !Number.isFinite(x)));

/** What a value of each kind zod checks for is called in a message. */
const KINDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  // z.record (item metadata, a search's filters.metadata, an array body's elements): a JSON object too.
  record: 'an object',
  array: 'an array',
  null: 'null',
};
/** Sizes of the kinds of value a length applies to. */
const UNITS: Readonly<Record<string, string>> = { string: 'characters', array: 'items', set: 'items', file: 'bytes' };

/**
 * What a check without a message of its own says: zod's English locale says "Too big: expected
 * number to be <=100" or "Invalid input: expected string, received undefined"; the field is the
 * error's key in `fieldErrors`, so the message says what to send ("Must be at most 100.",
 * "Required.", "Must be one of asc or desc."). Checks with their own message keep it; other issues
 * keep the locale's.
 */
function plainMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'Required.';
      // `1e400`: a number to the sender, which JSON.parse reads as Infinity ("Must be a number." said otherwise).
      if (holdsInfinity(issue.input)) return `${OUT_OF_RANGE}.`;
      // z.int() sent another kind of value expects a number: it says an integer.
      const def = issue.inst?._zod.def;
      const kind = KINDS[def && 'format' in def && String(def.format).includes('int') ? 'int' : issue.expected];
      return kind ? `Must be ${kind}.` : undefined;
    }
    case 'too_big': {
      const n = String(issue.maximum);
      const unit = UNITS[issue.origin];
      if (unit) return issue.exact ? `Must have exactly ${n} ${unit}.` : `Must have at most ${n} ${unit}.`;
      return issue.inclusive ? `Must be at most ${n}.` : `Must be less than ${n}.`;
    }
    case 'too_small': {
      const n = String(issue.minimum);
      const unit = UNITS[issue.origin];
      if (unit) return issue.exact ? `Must have exactly ${n} ${unit}.` : n === '1' ? 'Must not be empty.' : `Must have at least ${n} ${unit}.`;
      return issue.inclusive ? `Must be at least ${n}.` : `Must be greater than ${n}.`;
    }
    case 'invalid_value': {
      // zod's locale: 'Invalid option: expected one of "asc"|"desc"' (a search's mode, an event
      // list's order, a filter's op, a key's scopes, a template's status, ...).
      const values = issue.values.map(String);
      if (values.length === 0) return undefined;
      return values.length === 1 ? `Must be ${values[0]}.` : `Must be one of ${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}.`;
    }
    default:
      return undefined;
  }
}

// zod/mini ships no locale and no cycle-safe memoizer; install what classic zod installs by default,
// so messages stay English and parsing behaves as before. Every schema module imports this one, and
// the memoizer must be in place before the first container schema is built.
z.config({ ...en(), customError: plainMessage, memoizer: z.memoizer() });

/** The spec's pattern for item IDs in responses and cursors. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** Positive integer without a leading zero. */
export const POSITIVE_INT_PATTERN = /^[1-9][0-9]*$/;

const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * A console context ID as Core requests name it (`context_id`): a positive integer's digits, kept
 * as text. Any such id is well formed (the spec's range is x >= 1): one past the largest a context
 * can have names none, which search and recommendations answer as any absent context (404,
 * control/serving.ts `contextNumber`), and an event stores as sent.
 */
export const contextIdText = z.string().check(z.regex(POSITIVE_INT_PATTERN, 'context_id must be a numeric console context ID'));

/**
 * The same in a JSON body (a search, an event), where a positive integer is taken too: kept as text.
 * A JSON number past the largest exact integer has been rounded by the time it is parsed, so its
 * digits as sent are lost: neither looked up nor stored rounded, it is 400 asking for the digits as a
 * string (which search answers 404 and an event stores, as above), as item metadata's numbers are.
 */
export const contextIdInBody = z.union([contextIdText, z.pipe(z.int().check(z.positive()), z.transform(String))], {
  error: (issue) =>
    typeof issue.input === 'number' && Number.isInteger(issue.input) && issue.input > MAX_ID
      ? `context_id past ${MAX_ID} must be sent as a string of its digits (a JSON number that large is not exact)`
      : 'context_id must be a numeric console context ID (a positive integer, or its digits as a string)',
});

/** The two checks of a closed range, under one message that names the field and the range. */
export const between = (field: string, min: number, max: number) => {
  const message = `${field} must be between ${min} and ${max}`;
  return [z.gte(min, message), z.lte(max, message)] as const;
};

/**
 * A server-generated numeric id, as a path segment or cursor string: any positive integer (the
 * spec's range is x >= 1). One past the largest id a record can have (ids count up from 1) names
 * no record: a path throws `beyond`'s error (its 404, the digits as sent), a cursor reads as the
 * largest id (an empty page).
 */
export const numericId = (what: string, beyond?: (digits: string) => Error) =>
  z.pipe(
    z.string().check(z.regex(POSITIVE_INT_PATTERN, `${what} must be a positive integer`)),
    z.transform((digits: string) => {
      const id = Number(digits);
      if (id <= MAX_ID) return id;
      if (beyond) throw beyond(digits);
      return MAX_ID;
    }),
  );

/** An integer query parameter; its messages name it (`field`), as a body field's do. */
export const intParam = (min: number, max: number = MAX_ID, field = 'limit') =>
  documentAs(
    z
      .pipe(
        z.string().check(z.regex(/^-?[0-9]+$/, `${field} must be an integer`)),
        z.transform((s: string) => Number(s)),
      )
      .check(z.refine((n) => n >= min && n <= max, `${field} must be between ${min} and ${max}`)),
    z.int().check(z.gte(min), z.lte(max)),
  );

/**
 * An integer query parameter bounded below only (the spec's `created_after`, `created_before`:
 * integer >= 1). A value past the largest exact integer is well formed and reads as that integer:
 * no stored time reaches it, so the answer is the one the value itself would give.
 */
export const atLeastParam = (min: number, field: string) =>
  documentAs(
    z
      .pipe(
        z.string().check(z.regex(/^-?[0-9]+$/, `${field} must be an integer`)),
        z.transform((s: string) => Math.min(Number(s), MAX_ID)),
      )
      .check(z.refine((n) => n >= min, `${field} must be an integer of at least ${min}`)),
    // No maximum: a value past 2^53 - 1 is taken (read as 2^53 - 1); until 2026-12-08 the document said 2^53 - 1 was the largest.
    documentUnboundedAbove(z.int().check(z.gte(min))),
  );

/** A field's message: `missing` when it was not sent, `wrong` when it was, of another type. */
export const missingOr =
  (missing: string, wrong: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? missing : wrong;

/** A type check's message: "<field> is required" when it was not sent, "<field> must be <kind>" when it was, of another type. */
export const kindOf = (field: string, kind: string) => missingOr(`${field} is required`, `${field} must be ${kind}`);

/**
 * z.int's issue for a number past the safe integers: `above` or `below`, else undefined. JSON's
 * 1e400 reads as Infinity, which z.int takes as another type: past the safe integers too.
 */
const pastSafe = (issue: z.core.$ZodRawIssue, below: string, above: string): string | undefined =>
  issue.code === 'too_big' || issue.input === Number.POSITIVE_INFINITY ? above : issue.code === 'too_small' || issue.input === Number.NEGATIVE_INFINITY ? below : undefined;
/**
 * An integer field: `kindOf`'s message for another type, and the field's range message (`below`,
 * `above`) for a number past the safe integers (z.int's own bound: 9007199254740993 as JSON, 1e300,
 * 1e400: `pastSafe`). That issue ends the checks, so the value is told once: until 2026-12-07
 * z.int's issue took the type's message and the range check after it said so again
 * (`context_id must be an integer` and `context_id is out of range`).
 */
export const intOf = (field: string, kind: string, below: string, above: string = below) => z.int({ error: (issue) => pastSafe(issue, below, above) ?? kindOf(field, kind)(issue), abort: true });
/**
 * An integer field with the locale's messages (`plainMessage`), told once past the safe integers
 * too, as `intOf` tells a named field: `low` and `high` are what its own range check says below and
 * above (z.int's bound said "Must be at least -9007199254740991." beside it until 2026-12-07).
 */
export const plainInt = (low: string, high = `Must be at most ${Number.MAX_SAFE_INTEGER}.`) => z.int({ error: (issue) => pastSafe(issue, low, high), abort: true });
/** An integer field of a closed range (`between`), told once past the safe integers too (`intOf`). */
export const intBetween = (field: string, min: number, max: number) => intOf(field, 'an integer', `${field} must be between ${min} and ${max}`).check(...between(field, min, max));

/**
 * No NUL, line break or other control character, nor Unicode's line and paragraph separators
 * (U+2028, U+2029: a line break in a browser's text and in JavaScript source, taken until
 * 2026-12-07): the text is one line a console shows (a name, a version's label).
 */
export const oneLineOnly = (field: string) => z.refine<string>((s) => !/[\p{Cc}\u2028\u2029]/u.test(s), `${field} must not hold control characters (NUL, tab, line breaks, ...)`);

/**
 * oneLineOnly as the document says it: no character of the class (\p{Cc} is U+0000-U+001F and
 * U+007F-U+009F), spelled without `\p` so any JSON Schema validator reads it (see SHOWS_IN_BMP).
 * Until 2026-12-08 the document took a name holding a line break or NUL, which is 400.
 */
export const ONE_LINE_DOC = { not: { pattern: '[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]' } } as const;

/**
 * A character that shows: not white space, nor one Unicode says to render as nothing
 * (Default_Ignorable_Code_Point: zero-width spaces and joiners, soft hyphens, Hangul fillers).
 * Until 2026-12-07 a name of only U+200B was taken: a console row with no name to read or click.
 */
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}]/u;
/**
 * VISIBLE's characters of the BMP spelled out, as the OpenAPI document's `pattern` (the regex's
 * source): a JSON Schema validator compiling it without the `u` flag read `\p{White_Space}` as the
 * letters of its name (Ajv's unicodeRegExp off, JavaScript's `new RegExp(pattern)`): a name such as
 * `Ice` or `public`, all of them among those letters, failed, a zero-width space passed, and
 * Python's `re` refused to compile it (`bad escape \p`; until 2026-12-07). With or without the flag
 * this class matches the same strings: a character past the BMP matches it either way (as a
 * surrogate, or as itself), so the few ignorable ones there (U+1BCA0-1BCA3, U+1D173-1D17A,
 * U+E0000-E0FFF) are refused by VISIBLE alone, which the document cannot state portably.
 */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: a class of single code points; U+034F (the combining grapheme joiner) is one of them, not a mark on the one before it
const SHOWS_IN_BMP = /[^\t-\r \x85\xa0\xad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8]/;

/** A line of text a console shows (a name, a key's environment): not blank (nothing that shows), no control characters. */
export const oneLine = (field: string, max: number) =>
  documentChecks(
    z.string({ error: kindOf(field, 'a string') }).check(
      // An empty one is said to be empty alone (until 2026-12-08 also "must not be blank": the field named twice).
      z.minLength(1, { error: `${field} must not be empty`, abort: true }),
      z.maxLength(max, `${field} must be at most ${max} characters`),
      z.regex(SHOWS_IN_BMP, `${field} must not be blank`),
      // Past the BMP, ignorables alone (tag characters): blank too, said once.
      z.refine<string>((s) => !SHOWS_IN_BMP.test(s) || VISIBLE.test(s), `${field} must not be blank`),
      oneLineOnly(field),
    ),
    ONE_LINE_DOC,
  );

export const displayName = oneLine('name', 256);

/**
 * What a person writes about a record (a context, a segment): at most 2,000 characters. Always a
 * string: one created without it answers `""` (a model version's label and description, set only
 * by PATCH, are null until then).
 */
export const recordDescription = z.string({ error: kindOf('description', 'a string') }).check(z.maxLength(2000, 'description must be at most 2000 characters'));

/** A list's `limit` query parameter: 1 to 100, `byDefault` when not sent. */
export const limitParamOf = (byDefault: number) => documentAs(z._default(z.optional(intParam(1, 100)), byDefault), z._default(z.optional(z.int().check(z.gte(1), z.lte(100))), byDefault));
export const limitParam = limitParamOf(20);

const UNSTORABLE_KEYS = ['constructor', '__proto__'] as const;

/**
 * What a DynamoDB item can hold of a JSON value, which JSON itself does not limit: at most 32
 * levels of nesting, and numbers that are 0 or of magnitude 1e-130 up to 2^53 - 1 (the SDK
 * refuses larger ones, which JavaScript holds only approximately anyway; DynamoDB smaller ones),
 * and no object key named constructor or __proto__.
 * The first problem found, or undefined.
 */
export function unstorable(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'number') {
    // Infinity (a number JSON.parse could not hold) is `jsonValue`'s to report, where it stands.
    if (!Number.isFinite(value)) return undefined;
    const a = Math.abs(value);
    if (a !== 0 && (a < 1e-130 || a > Number.MAX_SAFE_INTEGER))
      return `the number ${value} cannot be stored: numbers must be 0 or of magnitude 1e-130 to 9007199254740991 (send larger ones as strings)`;
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= 32) return 'JSON values may nest at most 32 levels deep';
  // The DynamoDB marshaller takes an object with its own `constructor` for a class instance and
  // refuses it; `__proto__` never survives a copy by assignment.
  for (const key of UNSTORABLE_KEYS) if (!Array.isArray(value) && Object.hasOwn(value, key)) return `an object key may not be named ${key}`;
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    const problem = unstorable(v, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * A number DynamoDB can store (0, or a magnitude from 1e-130 to 2^53 - 1): any other is 400, not a
 * failed write. `use` says what to send instead, for a field whose own range is narrower (until
 * 2026-12-08 a learning_rate of 1e-300 was told "use 0", which its range refuses). The console's
 * and the control plane's schemas both use it (until the review of 80641b60 each spelled it).
 */
export const storableNumber = (field: string, use = 'use 0 or a magnitude from 1e-130 to 9007199254740991') =>
  // Registered (documentStorable): the document states the magnitudes refused below 1e-130 (until 2026-12-08 it took 1e-131 and 5e-324).
  z.number({ error: kindOf(field, 'a number') }).check(documentStorable(z.refine((n) => unstorable(n) === undefined, `${field} cannot be stored: ${use}`)));

/**
 * What the document says of a storable number past what zod's checks state (JSON Schema has no
 * words for the magnitudes refused): its greatest (2^53 - 1) and the rule in words. A schema
 * whose own range is narrower does without; one unbounded below adds its least itself.
 */
export const STORABLE_RANGE_DOC = { maximum: Number.MAX_SAFE_INTEGER, description: '0, or a magnitude from 1e-130 to 9007199254740991 (what can be stored).' };

/**
 * `unstorable` of an object's properties (the object at `depth`), each problem named by the
 * property that holds it, as `jsonValue` names a number out of range (`metadata.price`, `3.n`):
 * a key DynamoDB cannot take is named itself. Properties in `skip` are left to their own checks.
 * Until 2026-12-07 a problem was named by the whole object (`metadata`, or the event's index `3`,
 * no field at all), and a property with its own check (an event's `item_id` past 2^53-1) was
 * told twice, once under the event's index.
 */
export function unstorableProperties(value: Record<string, unknown>, depth: number, skip: (key: string) => boolean = () => false): { key: string; message: string }[] {
  const problems: { key: string; message: string }[] = [];
  for (const [key, v] of Object.entries(value)) {
    if (skip(key)) continue;
    const message = (UNSTORABLE_KEYS as readonly string[]).includes(key) ? `an object key may not be named ${key}` : unstorable(v, depth + 1);
    if (message) problems.push({ key, message });
  }
  return problems;
}

/** Whether a value JSON.parse gave holds only finite numbers (down to `unstorable`'s 32 levels: deeper, it refuses the nesting). */
function finiteNumbers(value: unknown, depth = 0): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value !== 'object' || depth >= 32) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (!finiteNumbers(v, depth + 1)) return false;
  return true;
}

/**
 * Any JSON value of a parsed body. `z.json()` alone refuses a number JSON.parse could not hold
 * (`1e400` parses as Infinity) with zod's bare "Invalid input": this says what is wrong.
 */
export const jsonValue = documentAs(
  z.pipe(z.unknown().check(z.refine(finiteNumbers, 'a number is out of range: numbers must be 0 or of magnitude 1e-130 to 9007199254740991 (send larger ones as strings)')), z.json()),
  named('JsonValue', z.json(), 'Any JSON value.'),
);

export const jsonObject = z.record(z.string(), jsonValue);

const pathKey = (path: readonly PropertyKey[]): string => path.map(String).join('\u0000');

/**
 * Each issue as (path, message), an unknown-keys issue once per key. A length issue where the
 * value is of the wrong kind is left out: zod runs a length check on any value with a length
 * after its kind check failed, so an array field sent a string was told "Must be an array." and
 * "Must have at most 50 characters." (a string field sent a list, "Must not be empty.").
 */
function* flatIssues(error: z.core.$ZodError): Generator<{ path: PropertyKey[]; message: string }> {
  const wrongKind = new Set(error.issues.filter((i) => i.code === 'invalid_type').map((i) => pathKey(i.path)));
  for (const issue of error.issues) {
    if ((issue.code === 'too_big' || issue.code === 'too_small') && issue.origin in UNITS && wrongKind.has(pathKey(issue.path))) continue;
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) yield { path: [...issue.path, k], message: 'Unknown field.' };
    } else {
      yield { path: issue.path, message: issue.message };
    }
  }
}

/** Turns zod issues into the spec's `fieldErrors` (paths joined with dots: `3.user_id`). */
export function fieldErrorsOf(error: z.core.$ZodError): FieldErrors {
  // A Map, not an object: a path may be `constructor` or `__proto__`, which an object already "has".
  const out = new Map<string, string[]>();
  for (const { path, message } of flatIssues(error)) {
    // A key may be empty (`?=5`): named as sent, not as the body.
    const at = path.length === 0 ? 'body' : path.map(String).join('.');
    const messages = out.get(at);
    if (messages) messages.push(message);
    else out.set(at, [message]);
  }
  // fromEntries defines own properties, so even `__proto__` stays a key.
  return Object.fromEntries(out);
}

/**
 * Re-raises a nested schema's issues inside a transform (whose context, in zod/mini, is the
 * parse payload itself). The issues are what classic zod's `ctx.addIssue` recorded.
 */
export function forwardIssues(error: z.core.$ZodError, payload: z.core.ParsePayload): void {
  for (const { path, message } of flatIssues(error)) payload.issues.push({ code: 'custom', path: [...path], message, input: payload.value });
}

/** Parses `input` with `schema`, throwing the 400 validation error on failure. */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, input: unknown, what: string): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new ValidationError(`Invalid ${what}.`, fieldErrorsOf(r.error));
  return r.data;
}
