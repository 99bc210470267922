import type { Json } from '../domain/types.ts';
import type { PlatformSearchBody, SearchBody } from '../schemas/search.ts';
import { NO_FILTER, type DocFilter, type SearchDoc } from './engine.ts';

const anyOf = (want: string | string[]) => (v: Json | undefined) => (Array.isArray(want) ? want : [want]).some((w) => v === w);

/** The Core search filters (api-decisions) as a predicate over documents. */
export function coreFilter(f: SearchBody['filters']): DocFilter {
  if (!f) return NO_FILTER;
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

function fieldValue(d: SearchDoc, field: string): Json | undefined {
  if (field.startsWith('metadata.')) return d.metadata[field.slice('metadata.'.length)];
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

/** The Platform item-search filters `[{ field, op, value }]` as a predicate. */
export function platformFilter(filters: PlatformSearchBody['filters']): DocFilter {
  const checks = filters.map(({ field, op, value: given }): DocFilter => {
    // Item IDs come as integers or as their digits (validated): compared as numbers.
    const asId = (x: Json | undefined) => (field === 'id' && typeof x === 'string' ? Number(x) : x);
    const value = Array.isArray(given) ? given.map(asId) : asId(given);
    const values = Array.isArray(value) ? value : [value];
    return (d) => {
      const v = fieldValue(d, field);
      switch (op) {
        case 'eq':
          return v === value;
        case 'neq':
          return v !== value;
        case 'in':
          return values.some((x) => x === v);
        case 'gte':
          return typeof v === 'number' && typeof value === 'number' && v >= value;
        case 'lte':
          return typeof v === 'number' && typeof value === 'number' && v <= value;
        case 'exists':
          return value === false ? v === undefined : v !== undefined;
      }
    };
  });
  return checks.length ? (d) => checks.every((c) => c(d)) : NO_FILTER;
}
