/** Keys whose object values keep their own order: schema properties (in declaration order) and examples (as written). */
const KEEP_ORDER = new Set(['properties', 'example']);
/** The document's top level, in the order OpenAPI documents are read. */
const TOP = ['openapi', 'info', 'servers', 'tags', 'paths', 'components'];

function sorted(v: unknown, keepOrder: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => sorted(x, false));
  if (v === null || typeof v !== 'object') return v;
  const entries = Object.entries(v as Record<string, unknown>);
  if (!keepOrder) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, x]) => [k, k === 'example' ? x : sorted(x, KEEP_ORDER.has(k))]));
}

/** The document as pretty JSON with a stable key order (sorted, but for schema properties and examples), ending in a newline. */
export function stableJson(doc: Record<string, unknown>): string {
  const top = Object.keys(doc).sort((a, b) => (TOP.indexOf(a) + 1 || 99) - (TOP.indexOf(b) + 1 || 99) || (a < b ? -1 : 1));
  const out = Object.fromEntries(top.map((k) => [k, sorted(doc[k], false)]));
  return `${JSON.stringify(out, null, 2)}\n`;
}
