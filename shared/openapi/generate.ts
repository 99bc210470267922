import { loadDeclared } from './declared.ts';
import { buildDocument } from './document.ts';
import { stableJson } from './stable-json.ts';

/** Where the generated document is committed (and from where functions/meta/openapi.ts serves it). */
export const DOCUMENT_PATH = 'docs/openapi.json';

/** The OpenAPI document as committed: generated from the route table and the handlers, as stable JSON. */
export async function generateDocument(): Promise<string> {
  return stableJson(buildDocument(await loadDeclared()));
}
