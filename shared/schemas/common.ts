import * as z from 'zod';
import { ValidationError, type FieldErrors } from '../errors.ts';

/** The spec's pattern for item IDs in responses and cursors. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** Positive integer without a leading zero. */
export const POSITIVE_INT_PATTERN = /^[1-9][0-9]*$/;

const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A server-generated numeric id, as a path segment or cursor string. */
export const numericId = (what: string) =>
  z
    .string()
    .regex(POSITIVE_INT_PATTERN, `${what} must be a positive integer`)
    .transform((s) => Number(s))
    .refine((n) => n <= MAX_ID, `${what} is out of range`);

/** An integer query parameter. */
export const intParam = (min: number, max: number = MAX_ID) =>
  z
    .string()
    .regex(/^-?[0-9]+$/, 'must be an integer')
    .transform((s) => Number(s))
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`);

export const limitParam = intParam(1, 100).optional().default(20);

export const jsonObject = z.record(z.string(), z.json());

/** Each issue as (path, message), an unknown-keys issue once per key. */
function* flatIssues(error: z.ZodError): Generator<{ path: PropertyKey[]; message: string }> {
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) yield { path: [...issue.path, k], message: 'Unknown field.' };
    } else {
      yield { path: issue.path, message: issue.message };
    }
  }
}

/** Turns zod issues into the spec's `fieldErrors` (paths joined with dots: `3.user_id`). */
export function fieldErrorsOf(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const { path, message } of flatIssues(error)) (out[path.map(String).join('.') || 'body'] ??= []).push(message);
  return out;
}

/** Re-raises a nested schema's issues inside a transform or refinement. */
export function forwardIssues(error: z.ZodError, ctx: z.RefinementCtx): void {
  for (const { path, message } of flatIssues(error)) ctx.addIssue({ code: 'custom', path, message });
}

/** Parses `input` with `schema`, throwing the 400 validation error on failure. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new ValidationError(`Invalid ${what}.`, fieldErrorsOf(r.error));
  return r.data;
}
