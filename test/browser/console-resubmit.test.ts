import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, signIn, visible } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

// Found by a review of the console (2026-12-05). Audit history: the trail shown, a change made since (another tab, an API key), "Show history"
// sent again for the same resource: the page should read the trail again and show the change.
let t: TestStack;
let browser: Browser;
let page: Page;
let ruleId = 0;
beforeAll(async () => {
  t = await startTestStack();
  const ctx = await t.demo.platform('POST', '/api/contexts', { name: 'home', description: '' });
  const rule = await t.demo.platform('POST', '/api/rules', { name: 'lift lamps', context_id: ctx.body.id, conditions: [], boost: 2 });
  ruleId = rule.body.id;
  ({ browser, page } = await openBrowser());
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('re-sending a form for the same thing', () => {
  it('Audit history: "Show history" again shows a change made since', async () => {
    await page.goto(`${t.base}/console/#/audit?resource=rules/${ruleId}`);
    await visible(page.getByRole('heading', { name: 'Sign in to the console' }), 60_000);
    await signIn(page, t.stack.credentials.console_email as string, t.stack.credentials.console_password as string);
    await visible(page.getByRole('heading', { level: 1, name: 'Audit history' }));
    await visible(page.getByRole('cell', { name: 'create', exact: true }));
    expect((await t.demo.platform('PATCH', `/api/rules/${ruleId}`, { enabled: false })).status).toBe(200);
    let reads = 0;
    page.on('request', (r) => {
      if (r.url().includes('/api/audit')) reads += 1;
    });
    await page.getByRole('button', { name: 'Show history' }).click();
    await visible(page.getByRole('cell', { name: 'update', exact: true }));
    expect(reads).toBe(1);
  }, 60_000);

  it('Search analytics: "Show" again reads the report again', async () => {
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Synonyms & analytics', exact: true }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Synonyms & analytics' }));
    await visible(page.getByText('Click-through rate'));
    let reads = 0;
    page.on('request', (r) => {
      if (r.url().includes('/api/analytics/searches')) reads += 1;
    });
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => reads, { timeout: 10_000 }).toBe(1);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => reads, { timeout: 10_000 }).toBe(2);
  }, 60_000);
});
