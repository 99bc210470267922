/**
 * `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document generated from the route
 * table (shared/routes.ts), the request schemas the handlers are built with and the answers of
 * shared/openapi/operations-*.ts. test/unit/openapi.test.ts fails when the committed file differs.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The handler modules are imported, not run: no X-Ray SDK, no metrics.
process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const { DOCUMENT_PATH, generateDocument } = await import('../shared/openapi/generate.ts');
const text = await generateDocument();
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', DOCUMENT_PATH), text);
const doc = JSON.parse(text) as { paths: Record<string, Record<string, unknown>> };
const operations = Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).filter((k) => k !== 'servers').length, 0);
console.log(`wrote ${DOCUMENT_PATH}: ${operations} operations, ${Math.round(text.length / 1024)} KB`);
