import type { ItemWithVector } from '../domain/types.ts';

/** An item as the search index sees it: the item with its vector (null until embedded). */
export type SearchDoc = ItemWithVector;

export type SearchMode = 'hybrid' | 'keyword' | 'semantic';

export interface Hit {
  doc: SearchDoc;
  score: number;
}

/** Filters as a predicate over documents (built from the request's filters). */
export type DocFilter = (d: SearchDoc) => boolean;
/** The filter of a request without filters: ranking recognises it and reads no document for it. */
export const NO_FILTER: DocFilter = () => true;
