import type { Json } from '../domain/types.ts';
import type { FilterClause, SearchBody, ShorthandFilters } from '../schemas/search.ts';
import { NO_FILTER, type DocFilter, type SearchDoc } from './types.ts';

/** Whether a field's value is `want`, or holds it when the field is a list (as clause `eq` matches). */
const holds = (v: Json | undefined, want: Json) => v === want || (Array.isArray(v) && v.includes(want));
const anyOf = (want: string | string[]) => (v: Json | undefined) => (Array.isArray(want) ? want : [want]).some((w) => holds(v, w));

/** The Core search filters (api-decisions): the shorthand object or a list of clauses, as a predicate over documents. */
export function coreFilter(f: SearchBody['filters']): DocFilter {
  if (!f) return NO_FILTER;
  return Array.isArray(f) ? clauseFilter(f) : shorthandFilter(f);
}

function shorthandFilter(f: ShorthandFilters): DocFilter {
  const checks: DocFilter[] = [];
  if (f.category !== undefined) {
    const m = anyOf(f.category);
    checks.push((d) => m(d.metadata.category));
  }
  if (f.brand !== undefined) {
    const m = anyOf(f.brand);
    checks.push((d) => m(d.metadata.brand));
  }
  if (f.availability !== undefined) {
    const want = f.availability;
    checks.push((d) => holds(d.metadata.availability, want));
  }
  if (f.price) {
    const { gte, lte } = f.price;
    checks.push((d) => someNumber(d.metadata.price, (p) => (gte === undefined || p >= gte) && (lte === undefined || p <= lte)));
  }
  if (f.metadata) {
    for (const [k, v] of Object.entries(f.metadata)) {
      const get = fieldGetter(`metadata.${k}`);
      checks.push((d) => holds(get(d), v));
    }
  }
  return checks.length ? (d) => checks.every((c) => c(d)) : NO_FILTER;
}

/**
 * How a filter or sort field (`metadata.<key>` or a top-level field) is read from a document,
 * worked out once per field: a filter reads it for every candidate of a query (tens of thousands
 * for a broad one). A metadata key reads
 * the document's own value; only a key that Object.prototype also has (`constructor`) needs the
 * own-property check, as metadata are plain objects whose keys are all their own.
 */
export function fieldGetter(field: string): (d: SearchDoc) => Json | undefined {
  if (field.startsWith('metadata.')) {
    const key = field.slice('metadata.'.length);
    if (key in Object.prototype) return (d) => (Object.hasOwn(d.metadata, key) ? d.metadata[key] : undefined);
    return (d) => d.metadata[key];
  }
  switch (field) {
    case 'id':
      return (d) => d.id;
    case 'name':
      return (d) => d.name;
    case 'description':
      return (d) => d.description;
    case 'active':
      return (d) => d.active;
    case 'created':
      return (d) => d.created;
    case 'updated_at':
      return (d) => d.updated_at;
    default:
      return () => undefined;
  }
}

/**
 * Whether a field's number passes `test`, or one of the numbers of a list does (as `eq` and `in`
 * match a list by its elements, and as facets take a list's numbers into a key's min and max).
 */
const someNumber = (v: Json | undefined, test: (x: number) => boolean): boolean => (typeof v === 'number' ? test(v) : Array.isArray(v) && v.some((x) => typeof x === 'number' && test(x)));

/** A field without a value: not there, or null. */
const absent = (v: unknown) => v === undefined || v === null;

/**
 * `[{ field, op, value }]` clauses (all must hold) as a predicate: the Platform item search's
 * filters, and Core search's `filters` list. `eq`, `neq` and `in` compare exactly (`neq` also
 * holds when the field is absent); `gt`, `gte`, `lt`, `lte` hold only for numbers (a list's
 * numbers each); `exists`
 * true / false: the field is present / absent, a key whose value is null absent (as facets count
 * it and as rule conditions test it).
 */
export function clauseFilter(filters: readonly FilterClause[]): DocFilter {
  const checks = filters.map(({ field, op, value: given }): DocFilter => {
    // Item IDs come as integers or as their digits (validated): compared as numbers.
    const asId = (x: Json | undefined) => (field === 'id' && typeof x === 'string' ? Number(x) : x);
    const value = Array.isArray(given) ? given.map(asId) : asId(given);
    const values = Array.isArray(value) ? value : [value];
    const n = typeof value === 'number' ? value : NaN;
    const get = fieldGetter(field);
    // One predicate per operator, chosen once.
    switch (op) {
      case 'eq':
        return (d) => {
          const v = get(d);
          return v === value || (Array.isArray(v) && v.includes(value as Json));
        };
      case 'neq':
        return (d) => {
          const v = get(d);
          return v !== value && !(Array.isArray(v) && v.includes(value as Json));
        };
      case 'in':
        return (d) => {
          const v = get(d);
          return values.some((x) => x === v || (Array.isArray(v) && v.includes(x as Json)));
        };
      case 'gt':
        return (d) => someNumber(get(d), (x) => x > n);
      case 'gte':
        return (d) => someNumber(get(d), (x) => x >= n);
      case 'lt':
        return (d) => someNumber(get(d), (x) => x < n);
      case 'lte':
        return (d) => someNumber(get(d), (x) => x <= n);
      case 'exists':
        return value === false ? (d) => absent(get(d)) : (d) => !absent(get(d));
    }
  });
  if (checks.length === 0) return NO_FILTER;
  return (d) => {
    for (const c of checks) if (!c(d)) return false;
    return true;
  };
}

/** The Platform item-search filters. */
export const platformFilter = clauseFilter;
