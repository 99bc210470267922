import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putLocalUser } from '../../shared/console-auth/identity.ts';
import { makeTable } from '../../shared/data/client.ts';
import { dynamoConsoleUserStore } from '../../shared/data/console-auth.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { go, openBrowser, signInAt, visible } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * The console as a viewer (read-only role) sees it, found wanting by a black-box review
 * (2026-12-06), on one stack: a viewer is shown what only an admin changes as read-only, not as
 * controls that take edits and have nothing to send them.
 */
let t: TestStack;
let browser: Browser;
let page: Page;
let problems: string[] = [];
const VIEWER = { email: 'viewer@demo.example.com', password: 'viewer-password-1' };

beforeAll(async () => {
  t = await startTestStack();
  await putLocalUser(dynamoConsoleUserStore(makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1')), { email: VIEWER.email, tenant: 'demo', role: 'viewer' }, VIEWER.password);
  ({ browser, page, problems } = await openBrowser());
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('a viewer', () => {
  it('signs in', async () => {
    await signInAt(page, `${t.base}/console/`, VIEWER);
    await visible(page.getByText('tenant demo · viewer'));
  });

  it('on a tenant without contexts is told there are none, not to create one (Rules, Rerank controls)', async () => {
    // Was "Create a context first." and "Create a context first (Rules page).": a viewer cannot.
    await go(page, 'Rules', 'Rules');
    await visible(page.getByText('No contexts yet: an admin creates them.', { exact: true }));
    await go(page, 'Rerank controls', 'Rerank controls');
    await visible(page.getByText('No contexts yet: an admin creates them.', { exact: true }));
    expect(await page.getByText(/Create a context/).count()).toBe(0);
  });

  it('on a tenant without event types or model versions is told an admin adds them, not to add them (Events, Model versions)', async () => {
    // Was "No event types yet: add the types your application sends (click, purchase…)." and
    // "No versions yet: start a training run.": a viewer can do neither.
    await go(page, 'Events', 'Events');
    await visible(page.getByText('No event types yet: an admin adds the types your application sends.', { exact: true }));
    await go(page, 'Model versions', 'Model versions');
    await visible(page.getByText('No versions yet: an admin starts a training run.', { exact: true }));
    expect(await page.getByText(/No event types yet: add|No versions yet: start/).count()).toBe(0);
  });

  it('reads the rerank controls in fields it cannot edit, and is told only admins change them', async () => {
    const ctx = await t.demo.platform('POST', '/api/contexts', { name: 'home', description: '' });
    expect(ctx.status).toBe(201);
    expect((await t.demo.platform('PUT', `/api/rerank-controls?contextId=${ctx.body.id}`, { diversity: 0.3, exclude_seen: true })).status).toBe(200);
    await go(page, 'Overview', 'Overview');
    // Were editable fields and an enabled checkbox with no Save button: what a viewer typed went nowhere.
    await go(page, 'Rerank controls', 'Rerank controls');
    const diversity = page.getByLabel('Diversity (0–1)');
    await visible(diversity);
    expect(await diversity.inputValue()).toBe('0.3');
    for (const label of ['Diversity (0–1)', 'Popularity weight', 'Freshness weight', 'Max items per category', 'Exclude items the user has seen']) {
      expect(await page.getByLabel(label).isDisabled(), label).toBe(true);
    }
    expect(await page.getByLabel('Exclude items the user has seen').isChecked()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save controls' }).count()).toBe(0);
    await visible(page.getByText('Only admins change rerank controls.'));
    expect(problems).toEqual([]);
  });

  it("follows a rule's and a segment's History link to its audit trail, which it may read", async () => {
    // Was no History link for a viewer (admins' alone), though GET /api/audit is a viewer's.
    const segment = await t.demo.platform('POST', '/api/segments', { name: 'buyers', description: '', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    expect(segment.status).toBe(201);
    const contexts = await t.demo.platform('GET', '/api/contexts');
    const rule = await t.demo.platform('POST', '/api/rules', { name: 'lift lamps', context_id: contexts.body.data[0].id, conditions: [], boost: 2 });
    expect(rule.status).toBe(201);
    await go(page, 'Segments', 'Segments');
    await page.getByRole('row').filter({ hasText: 'buyers' }).getByRole('link', { name: 'History', exact: true }).click();
    await visible(page.getByRole('heading', { name: `History of segments/${segment.body.id}` }));
    await visible(page.getByRole('cell', { name: 'create', exact: true }));
    await go(page, 'Rules', 'Rules');
    await page.getByRole('row').filter({ hasText: 'lift lamps' }).getByRole('link', { name: 'History', exact: true }).click();
    await visible(page.getByRole('heading', { name: `History of rules/${rule.body.id}` }));
    await visible(page.getByRole('cell', { name: 'create', exact: true }));
    expect(await page.getByRole('button', { name: /^(Delete|Disable)/ }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("follows a synonym set's History link to its audit trail", async () => {
    // A set's changes are in the trail since 2026-12-07 (resource synonyms/<id>); its row had no link.
    const set = await t.demo.platform('POST', '/api/synonyms', { synonyms: ['lamp', 'light'] });
    expect(set.status).toBe(201);
    await go(page, 'Synonyms & analytics', 'Synonyms & analytics');
    await page.getByRole('table', { name: 'Synonym sets' }).getByRole('row').filter({ hasText: 'lamp = light' }).getByRole('link', { name: 'History', exact: true }).click();
    await visible(page.getByRole('heading', { name: `History of synonyms/${set.body.id}` }));
    await visible(page.getByRole('cell', { name: 'create', exact: true }));
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
