import type { Json } from '../domain/types.ts';
import type { FilterClause, SearchBody, ShorthandFilters } from '../schemas/search.ts';
import { NO_FILTER, type DocFilter, type SearchDoc } from './types.ts';

const anyOf = (want: string | string[]) => (v: Json | undefined) => (Array.isArray(want) ? want : [want]).some((w) => v === w);

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
  if (f.availability !== undefined) checks.push((d) => d.metadata.availability === f.availability);
  if (f.price) {
    const { gte, lte } = f.price;
    checks.push((d) => {
      const p = d.metadata.price;
      return typeof p === 'number' && (gte === undefined || p >= gte) && (lte === undefined || p <= lte);
    });
  }
  if (f.metadata) for (const [k, v] of Object.entries(f.metadata)) checks.push((d) => d.metadata[k] === v);
  return checks.length ? (d) => checks.every((c) => c(d)) : NO_FILTER;
}

/** A document's value of a filter or sort field (`metadata.<key>` or a top-level field). */
export function fieldValue(d: SearchDoc, field: string): Json | undefined {
  if (field.startsWith('metadata.')) {
    const key = field.slice('metadata.'.length);
    // Own keys only: `metadata.constructor` is not Object.prototype.constructor.
    return Object.hasOwn(d.metadata, key) ? d.metadata[key] : undefined;
  }
  switch (field) {
    case 'id':
      return d.id;
    case 'name':
      return d.name;
    case 'description':
      return d.description;
    case 'active':
      return d.active;
    case 'created':
      return d.created;
    case 'updated_at':
      return d.updated_at;
    default:
      return undefined;
  }
}

/**
 * `[{ field, op, value }]` clauses (all must hold) as a predicate: the Platform item search's
 * filters, and Core search's `filters` list. `eq`, `neq` and `in` compare exactly (`neq` also
 * holds when the field is absent); `gt`, `gte`, `lt`, `lte` hold only for numbers; `exists`
 * true / false: the field is present / absent.
 */
export function clauseFilter(filters: readonly FilterClause[]): DocFilter {
  const checks = filters.map(({ field, op, value: given }): DocFilter => {
    // Item IDs come as integers or as their digits (validated): compared as numbers.
    const asId = (x: Json | undefined) => (field === 'id' && typeof x === 'string' ? Number(x) : x);
    const value = Array.isArray(given) ? given.map(asId) : asId(given);
    const values = Array.isArray(value) ? value : [value];
    const n = typeof value === 'number' ? value : NaN;
    return (d) => {
      const v = fieldValue(d, field);
      switch (op) {
        case 'eq':
          return v === value || (Array.isArray(v) && v.includes(value as Json));
        case 'neq':
          return v !== value && !(Array.isArray(v) && v.includes(value as Json));
        case 'in':
          return values.some((x) => x === v || (Array.isArray(v) && v.includes(x as Json)));
        case 'gt':
          return typeof v === 'number' && v > n;
        case 'gte':
          return typeof v === 'number' && v >= n;
        case 'lt':
          return typeof v === 'number' && v < n;
        case 'lte':
          return typeof v === 'number' && v <= n;
        case 'exists':
          return value === false ? v === undefined : v !== undefined;
      }
    };
  });
  return checks.length ? (d) => checks.every((c) => c(d)) : NO_FILTER;
}

/** The Platform item-search filters. */
export const platformFilter = clauseFilter;
