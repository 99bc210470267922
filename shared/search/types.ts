import type { ItemWithVector } from '../domain/types.ts';
import type { ColumnCache } from './columns.ts';

/** An item as the search index sees it: the item with its vector (null until embedded). */
export type SearchDoc = ItemWithVector;

/**
 * When (ms) a document's vector was saved: its `embedded_ms` (the table's, since 2026-12-05), else
 * the start of its `embedding_updated_at` second (a build's documents, rows saved before).
 */
export const vectorSavedMs = (d: SearchDoc): number => d.embedded_ms ?? (d.embedding_updated_at ?? 0) * 1000;

export type SearchMode = 'hybrid' | 'keyword' | 'semantic';

export interface Hit {
  doc: SearchDoc;
  score: number;
}

/** What a filter's columns say of a document (`DocFilter.over`): it fails, the document decides, it passes. */
export const FAILS = 0;
export const ASK = 1;
export const PASSES = 2;

/**
 * Filters as a predicate over documents (built from the request's filters), and, where a
 * filter's clauses can be read from a document set's metadata columns (a build's or a delta's,
 * columns.ts), its verdict on document i of that set: `FAILS`, `PASSES`, or `ASK` (the predicate
 * decides: a field without a column, a number a column cannot tell).
 */
export type DocFilter = ((d: SearchDoc) => boolean) & { readonly over?: (columns: ColumnCache) => Uint8Array };
/** The filter of a request without filters: ranking recognises it and reads no document for it. */
export const NO_FILTER: DocFilter = () => true;
