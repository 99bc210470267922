import type { Json, JsonObject } from './types.ts';

/**
 * How a metadata key named by a request (a search filter, facet or sort, the Platform item
 * search, a rule condition: `metadata.<key>`) reads an item's metadata: the one resolver of them
 * all, so that a key filters, counts, sorts and steers alike (docs/api.md, "Filters, facets,
 * highlighting and sort").
 *
 * - A top-level key spelled exactly so is its value, whatever it holds (`a.b` names the key
 *   "a.b" when the item has one; only the item's own keys, never Object.prototype's).
 * - Otherwise a key with dots is a path, each dot going one object deeper: `dims.w` of
 *   `{ "dims": { "w": 3 } }` is 3. Only the top level is tried whole: `a.b.c` of
 *   `{ "a": { "b.c": 1 } }` names nothing.
 * - A list on the path (before its last key) is gone through element by element, as Algolia
 *   reads `authors.name` over a list of authors: the value is the list of what each element's
 *   rest of the path holds (lists among them flattened, absent and null ones left out), so a
 *   filter matches when any element does and a facet counts each distinct one; none at all
 *   names nothing (absent).
 *
 * Worked out once per key: a filter reads it for every candidate of a query. A key without a
 * dot, not one Object.prototype has, costs one property read, as before paths.
 */
export function metadataReader(key: string): (metadata: JsonObject) => Json | undefined {
  const inherited = key in Object.prototype;
  if (!key.includes('.')) return inherited ? (m) => (Object.hasOwn(m, key) ? m[key] : undefined) : (m) => m[key];
  const path = key.split('.');
  return (m) => (Object.hasOwn(m, key) ? m[key] : along(m, path, 0));
}

/** The value at `path` from its key `at` on, in `v` (lists gone through element by element). */
function along(v: Json | undefined, path: readonly string[], at: number): Json | undefined {
  if (at === path.length) return v;
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const element of v) {
      const found = along(element, path, at);
      if (Array.isArray(found)) {
        for (const x of found) if (x !== null) out.push(x);
      } else if (found !== undefined && found !== null) out.push(found);
    }
    return out.length > 0 ? out : undefined;
  }
  if (typeof v !== 'object') return undefined;
  const k = path[at] as string;
  return Object.hasOwn(v, k) ? along(v[k], path, at + 1) : undefined;
}
