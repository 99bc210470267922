import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { DemoItem } from '../../shared/demo/catalog.ts';
import { DEMO_SIZES, generateDemo } from '../../shared/demo/generate.ts';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { holdStackEnv, TenantClient } from '../helpers/stack.ts';

const size = DEMO_SIZES.small;
const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-demo-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/**
 * The test's steps and its stacks' lines, with the seconds since it began: printed when it fails,
 * a timeout included, so that a test that hangs says in which step (a start, a stop, a wait for a
 * line) and what the seed had logged by then. Until 2026-12-07 a hang said nothing but its timeout.
 */
let trail: string[] = [];
let began = 0;
const note = (entry: string) => trail.push(`${((performance.now() - began) / 1000).toFixed(1)} s  ${entry}`);
beforeEach(({ onTestFailed }) => {
  trail = [];
  began = performance.now();
  onTestFailed(() => console.error(`demo test failed; its steps and lines:\n${trail.join('\n')}`));
});

/** A stack on the test's data directory that seeds the small demo shop (unless seeded), and the lines it logged. */
async function start(dir = dataDir): Promise<{ stack: LocalStack; lines: string[]; logged: (re: RegExp) => Promise<void> }> {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const log = (line: string) => {
    lines.push(line);
    note(line);
    for (const w of waiters) if (w.re.test(line)) w.resolve();
  };
  note(`starting a stack on ${dir}`);
  // Its settings leave process.env once it stopped (or failed to start): the next start of this
  // file begins where the first one did, not with the settings a stopped stack left.
  const release = holdStackEnv();
  // Handlers in a thread of their own: a stack started before in this process left its table
  // client in this thread's module state.
  let started: LocalStack;
  try {
    started = await startLocalStack({ dataDir: dir, port: 0, env: { LOCAL_API_THREADS: '1', CONSOLE_BUILD: 'off' }, demo: { size, log } });
  } catch (e) {
    release();
    note(`the start failed: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }
  note(`started on port ${started.port}`);
  const stack: LocalStack = {
    ...started,
    close: async () => {
      note('stopping the stack');
      try {
        await started.close();
      } finally {
        release();
      }
      note('stopped');
    },
  };
  // Waited for at most 90 s, then failed with the lines logged: a seed that failed (its line says
  // why) or went past the line no longer holds the test to its timeout with nothing to read.
  const logged = (re: RegExp) =>
    lines.some((l) => re.test(l))
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          note(`waiting for a line matching ${re}`);
          const timer = setTimeout(() => reject(new Error(`no line matching ${re} within 90 s; logged:\n${lines.join('\n')}`)), 90_000);
          waiters.push({ re, resolve: () => (clearTimeout(timer), resolve()) });
        });
  return { stack, lines, logged };
}

describe('the demo shop (npm start on a fresh data directory)', () => {
  it('seeds in the background with progress lines, then answers personalised recommendations and search; a restart seeds nothing', async () => {
    const first = await start();
    let closed = false;
    try {
      note('waiting for the seed to end');
      const summary = await first.stack.demo;
      expect(first.lines[0]).toMatch(/^demo: seeding the demo shop: 96 items, 200 shoppers, 3,000 events/);
      expect(first.lines.some((l) => /^demo: 96 items stored/.test(l))).toBe(true);
      expect(first.lines.some((l) => /^demo: 1,000 of 3,000 events stored/.test(l))).toBe(true);
      expect(summary).toMatchObject({ items: size.items, users: size.users, events: size.events, modelVersion: 1 });
      expect(first.lines.some((l) => /train-1 Completed: version 1/.test(l))).toBe(true);
      expect(JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')).status).toBe('done');

      const client = new TenantClient(`http://127.0.0.1:${first.stack.port}`, first.stack.credentials);
      // Every event stored once, every item once.
      const models = await client.platform('GET', '/api/models');
      expect(models.body.data).toHaveLength(1);
      expect(models.body.data[0]).toMatchObject({ version: 1, status: 'Approved', endpoints: ['main'] });
      expect(models.body.data[0].metrics.interactions).toBe(size.events);
      expect((await client.platform('GET', '/api/search-index')).body.items).toBe(size.items);

      // u-1 likes coffee and running: its recommendations come from the model, mostly from those.
      const recs = await client.core('GET', '/v1/recommendations?user_id=u-1&limit=10');
      expect(recs.status).toBe(200);
      expect(recs.body).toMatchObject({ strategy: 'personalized', model: { endpoint: 'main', version: 1 } });
      expect(recs.body.data.length).toBe(10);
      const categories = recs.body.data.map((r: { item: { metadata: { category: string } } }) => r.item.metadata.category);
      expect(categories.filter((c: string) => c === 'coffee' || c === 'running').length).toBeGreaterThanOrEqual(6);
      // Another shopper gets other recommendations.
      const other = await client.core('GET', '/v1/recommendations?user_id=u-2&limit=10');
      expect(other.body.strategy).toBe('personalized');
      expect(other.body.data.map((r: { item_id: string }) => r.item_id)).not.toEqual(recs.body.data.map((r: { item_id: string }) => r.item_id));

      // Search finds the catalog's items by name (the generator's first item, whose name is known).
      const named = generateDemo(size, { now: 0 }).items[0] as DemoItem;
      const found = await client.core('POST', '/v1/search', { query: named.name, limit: 5 });
      expect(found.status).toBe(200);
      expect(found.body.data[0]).toMatchObject({ id: '1', name: named.name });
      const personal = await client.core('POST', '/v1/search', { query: '', user_id: 'u-1', limit: 5 });
      expect(personal.body.data.length).toBe(5);

      // The shoppers' searches (one per 8 shoppers) and the events that followed some of them, in search analytics.
      const searched = summary?.searches;
      expect(searched?.searches).toBe(25);
      expect(first.lines.some((l) => /^demo: 25 searches made as the shoppers would/.test(l))).toBe(true);
      const analytics = await client.platform('GET', '/api/analytics/searches?click_type=view&limit=100');
      expect(analytics.status).toBe(200);
      // The two searches above count too.
      expect(analytics.body.totals).toMatchObject({ searches: 27, no_results: searched?.withoutResults, clicks: searched?.events.view, conversions: searched?.events.purchase });
      expect(analytics.body.top_queries.length).toBeGreaterThan(3);
      expect(analytics.body.no_result_queries.length).toBeGreaterThan(0);

      await first.stack.close();
      closed = true;
      // The next start seeds nothing, and the data are as they were.
      const second = await start();
      try {
        expect(second.stack.demo).toBeUndefined();
        await second.logged(/seeded on an earlier start/);
        const again = new TenantClient(`http://127.0.0.1:${second.stack.port}`, second.stack.credentials);
        expect((await again.platform('GET', '/api/models')).body.data).toHaveLength(1);
        expect((await again.platform('GET', '/api/search-index')).body.items).toBe(size.items);
      } finally {
        await second.stack.close();
      }
    } finally {
      if (!closed) await first.stack.close();
    }
  }, 120_000);

  it('seeds on the next start when the first stopped once it had written the credentials', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recsearch-demo-cut-'));
    try {
      // The start fails right after writing credentials.json (stack.json, written next, cannot
      // be: a folder is in its place), as a start killed then.
      mkdirSync(join(dir, 'stack.json'));
      await expect(start(dir)).rejects.toThrow();
      expect(existsSync(join(dir, 'credentials.json'))).toBe(true);
      rmSync(join(dir, 'stack.json'), { recursive: true });
      const next = await start(dir);
      try {
        expect(next.stack.demo).toBeDefined();
        await next.logged(/^demo: 96 items stored/);
        expect(next.lines[0]).toMatch(/^demo: seeding the demo shop: 96 items/);
      } finally {
        await next.stack.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
