/**
 * Records every answer test/helpers/stack.ts `request()` receives (so every integration test's
 * calls) and checks each against the OpenAPI document as it comes (see check.ts). After the test
 * file, a hook fails the file with each route, status and schema error found.
 * `CONTRACT_CHECK=off` turns it off.
 */
import { afterAll } from 'vitest';
import { checkExchange, type Exchange } from './check.ts';

const on = process.env.CONTRACT_CHECK !== 'off';
/** Problems found, each once: `route key → status: problem`. */
const problems = new Map<string, number>();
/** Route keys answered, with their statuses (what this file's requests covered). */
export const covered = new Map<string, Set<number>>();

export function recordExchange(x: Exchange): void {
  if (!on) return;
  const { key, problem } = checkExchange(x);
  if (key !== undefined) {
    let statuses = covered.get(key);
    if (!statuses) covered.set(key, (statuses = new Set()));
    statuses.add(x.status);
  }
  if (problem !== undefined) {
    const line = `${key ?? `${x.method} ${x.path}`} → ${problem}`;
    problems.set(line, (problems.get(line) ?? 0) + 1);
  }
}

// Only under vitest (the helpers may be imported by a script).
if (process.env.VITEST)
  afterAll(() => {
    if (problems.size === 0) return;
    const lines = [...problems].slice(0, 30).map(([line, n]) => `- ${line}${n > 1 ? ` (${n} times)` : ''}`);
    throw new Error(`${problems.size} answer(s) do not match docs/openapi.json (fix the handler, or the response schema in shared/schemas/responses/ and run npm run openapi):\n${lines.join('\n')}`);
  });
