// Expressions parsed once in dynalite (imported for its effect by every place that starts
// dynalite: dynamo.ts, dynalite-thread.mjs).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const validations = require(join(dirname(require.resolve('dynalite')), 'validations'));

/*
 * dynalite parses a request's expressions (key condition, condition, update, filter, projection)
 * with PEG parsers on every request: at 8 concurrent searches that was a quarter of its thread's
 * work (the change index's key condition, a search's analytics marks), and most of a fold's
 * counter additions (docs/benchmarks.md). The parse depends on nothing but the expressions and
 * their names and values, so the same request shape with the same values is parsed once: its
 * outcome (an error, or the parsed expressions) is kept by those, and each request gets a copy of
 * the parsed expressions (an update applies its own in place). Kept for the last MAX shapes.
 */
const PARSED = ['_updates', '_condition', '_keyCondition', '_filter', '_projection'];
const MAX = 4096;
const parse = validations.validateExpressions;
const seen = new Map();

/** A deep copy that keeps each object's prototype (dynalite's parse keeps lookups in null-prototype objects). */
function copy(v) {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(copy);
  const out = Object.create(Object.getPrototypeOf(v));
  for (const k of Object.keys(v)) out[k] = copy(v[k]);
  return out;
}

validations.validateExpressions = (data) => {
  const key = JSON.stringify([
    data.UpdateExpression,
    data.ConditionExpression,
    data.KeyConditionExpression,
    data.FilterExpression,
    data.ProjectionExpression,
    data.ExpressionAttributeNames,
    data.ExpressionAttributeValues,
  ]);
  let known = seen.get(key);
  if (known) {
    // Most recently used last: the oldest shape leaves first.
    seen.delete(key);
    seen.set(key, known);
    for (let i = 0; i < PARSED.length; i++) if (known.parsed[i] !== undefined) data[PARSED[i]] = copy(known.parsed[i]);
    return known.message;
  }
  const message = parse(data);
  known = { message, parsed: PARSED.map((f) => (data[f] === undefined ? undefined : copy(data[f]))) };
  if (seen.size >= MAX) seen.delete(seen.keys().next().value);
  seen.set(key, known);
  return message;
};
