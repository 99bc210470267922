import type { Browser, Locator, Page, Request, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAdmin, eventually, expected, go as goTo, openBrowser, signIn, signInAt, visible } from '../helpers/browser.ts';
import { putLocalUser } from '../../shared/console-auth/identity.ts';
import { makeTable } from '../../shared/data/client.ts';
import { dynamoConsoleSessionStore, dynamoConsoleUserStore } from '../../shared/data/console-auth.ts';
import { sha256Hex } from '../../shared/auth/secrets.ts';
import type { ConsoleSession } from '../../shared/console-auth/types.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

// The console at its edges, in Debian's Chromium against the local stack (as console.test.ts):
// lists longer than a page (a picker offers every context; a list loads more), deletes that are
// confirmed first, a failed request that leaves no earlier answer on screen, and the Overview
// chart's axis on small counts. Each test fails without the change it covers (a review's findings).

let t: TestStack;
let browser: Browser;
let page: Page;
let problems: string[] = [];

/** Follows a link of the console's navigation (on the one page). */
const go = (link: string, heading: string): Promise<void> => goTo(page, link, heading);

/**
 * `meanwhile`, with another tab of this browser signed in as the other tenant's admin (the session
 * the tabs share, one cookie, replaced under this tab); then that tab's session still stands, the
 * tab is closed, and this one signs in again as the demo admin, landing on Events.
 */
async function withOtherTenantTab(meanwhile: (other: Page) => Promise<void>): Promise<void> {
  await putLocalUser(
    dynamoConsoleUserStore(makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1')),
    { email: 'admin@other.example.com', tenant: 'other', role: 'admin' },
    'other-password-1',
  );
  const other = await page.context().newPage();
  try {
    await other.goto(`${t.base}/console/`);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await signIn(other, { email: 'admin@other.example.com', password: 'other-password-1' });
    await visible(other.getByText('tenant other', { exact: false }));
    await meanwhile(other);
    // The other tab's session stands.
    await other.reload();
    await visible(other.getByText('tenant other', { exact: false }));
  } finally {
    await other.close();
  }
  await signIn(page, demoAdmin(t));
  await visible(page.getByRole('heading', { level: 1, name: 'Events' }));
}

/** The Catalog page searched for `query`, its answer come. */
async function searchCatalog(query: string): Promise<void> {
  await go('Catalog', 'Catalog');
  await page.getByLabel('Search items').fill(query);
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/items/search'));
  await page.getByRole('button', { name: 'Search' }).click();
  await answered;
}

/** Answers the next dialog (accept or dismiss) and tells what it asked; undefined while none came. */
function answerNext(accept: boolean): () => string | undefined {
  let asked: string | undefined;
  page.once('dialog', (d) => {
    asked = `${d.type()}: ${d.message()}`;
    void (accept ? d.accept() : d.dismiss());
  });
  return () => asked;
}

/** The y-axis labels of the Overview's bar chart, bottom up, with the height of each one's grid line. */
async function axis(): Promise<{ label: string; y: number }[]> {
  const chart = page.getByRole('img', { name: /Events ingested per UTC day/ });
  return chart.locator('g:has(> line.grid)').evaluateAll((gs) => gs.map((g) => ({ label: g.querySelector('text')?.textContent ?? '', y: Number(g.querySelector('line')?.getAttribute('y1')) })));
}

const post = async (path: string, body: unknown) => {
  const r = await t.demo.platform('POST', path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};

beforeAll(async () => {
  t = await startTestStack();
  // 20 lamps and 5 tents; no events yet (the chart's first look is at an empty tenant).
  const items = [
    ...Array.from({ length: 20 }, (_, i) => ({ name: `Desk lamp ${i + 1}`, description: 'A reading lamp with a warm light.', metadata: { category: 'lamps' } })),
    ...Array.from({ length: 5 }, (_, i) => ({ name: `Dome tent ${i + 1}`, description: 'A two person tent for camping.', metadata: { category: 'tents' } })),
  ];
  expect((await t.demo.core('POST', '/v1/items', items)).status).toBe(201);
  ({ browser, page, problems } = await openBrowser());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('the console at its edges', () => {
  it('signs in; on an empty tenant the chart axis reads 0 and 1 once each', async () => {
    await signInAt(page, `${t.base}/console/`, demoAdmin(t));
    await visible(page.getByRole('heading', { level: 1, name: 'Overview' }));
    await visible(page.getByRole('img', { name: /Events ingested per UTC day/ }));
    // Was 0, 0, 1, 1, 1 (five ticks at max x i/4, rounded).
    expect((await axis()).map((a) => a.label)).toEqual(['0', '1']);
  });

  it('says where to create a context on a tenant without any (Experiments, Rerank controls), and sends a busy form once on a second Enter', async () => {
    for (const link of ['Experiments', 'Rerank controls']) {
      await go(link, link);
      // Was a picker with "No contexts yet" its one option (on Experiments, in a form that could not be sent).
      await visible(page.getByText('Create a context first (Rules page).', { exact: true }));
      expect(await page.getByLabel('Context', { exact: true }).count()).toBe(0);
    }
    await page.getByRole('link', { name: 'Rules page', exact: true }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Rules' }));
    await visible(page.getByRole('button', { name: 'Add context' }));

    // A second Enter while the create runs sends nothing (the button is aria-disabled, not disabled, while busy).
    await go('Segments', 'Segments');
    let sent = 0;
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    await page.route('**/api/segments', async (r) => {
      if (r.request().method() !== 'POST') return r.fallback();
      sent += 1;
      await held;
      // Answered here: the tenant keeps no segment (a later test counts them).
      await r.fulfill({ status: 201, json: { id: 1, name: 'twice' } });
    });
    await page.getByLabel('Segment name').fill('twice');
    await page.getByLabel('Segment name').press('Enter');
    await eventually('the create sent', async () => sent === 1);
    await page.getByLabel('Segment name').press('Enter');
    await page.waitForTimeout(300);
    release();
    await eventually('the name cleared', async () => (await page.getByLabel('Segment name').inputValue()) === '');
    await page.unroute('**/api/segments');
    expect(sent).toBe(1);
    await go('Overview', 'Overview'); // where the next test reloads
  });

  it('labels the axis with whole numbers at their heights when the busiest day has 2 events', async () => {
    const ids = ((await t.demo.core('GET', '/v1/items?limit=3')).body.data as { id: string }[]).map((x) => x.id);
    const events = [
      { type: 'click', user_id: 'u-1', item_id: ids[0], click: {} },
      { type: 'click', user_id: 'u-2', item_id: ids[1], click: {} },
    ];
    expect((await t.demo.core('POST', '/v1/events', events)).status).toBe(201);
    await page.reload();
    await visible(page.getByRole('heading', { level: 1, name: 'Overview' }));
    const chart = page.getByRole('img', { name: /Events ingested per UTC day/ });
    await eventually('2 events today', async () => (await chart.getAttribute('aria-label'))?.includes(' 2') ?? false);
    const ticks = await axis();
    // Was 0, 1, 1, 2, 2.
    expect(ticks.map((a) => a.label)).toEqual(['0', '1', '2']);
    // Evenly spaced, and today's bar of 2 reaches the line labelled 2.
    const [zero, one, two] = ticks.map((a) => a.y) as [number, number, number];
    expect(zero - one).toBeCloseTo(one - two, 6);
    const bar = chart.locator('rect').filter({ has: page.locator('title', { hasText: /: 2$/ }) });
    expect(Number(await bar.getAttribute('y'))).toBeCloseTo(two, 6);
  });

  it('offers every context past the first page, and selects one just added, which a new rule is stored under', async () => {
    for (let i = 1; i <= 103; i++) await post('/api/contexts', { name: `placement ${i}` });
    await go('Rules', 'Rules');
    const picker = page.getByLabel('Context', { exact: true });
    await eventually('103 contexts in the picker', async () => (await picker.locator('option').count()) === 103, 20_000);
    await page.getByLabel('New context name').fill('checkout');
    await page.getByRole('button', { name: 'Add context' }).click();
    await eventually('104 contexts in the picker', async () => (await picker.locator('option').count()) === 104);
    const chosen = picker.locator('option:checked');
    await eventually('the new context chosen', async () => /^checkout \(#\d+\)$/.test((await chosen.textContent()) ?? ''));
    const id = Number(await chosen.getAttribute('value'));
    expect(await chosen.textContent()).toBe(`checkout (#${id})`);
    await page.getByLabel('Rule name').fill('checkout rule');
    await page.getByLabel('Condition value').fill('lamps');
    await page.getByLabel('Condition field').fill('category');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await visible(page.getByRole('table', { name: 'Rules' }).getByRole('cell', { name: 'checkout rule' }));
    const stored = (await t.demo.platform('GET', `/api/rules?contextId=${id}`)).body.data;
    // Its boost left as the form offers it: 2, a promotion (was 0, which excluded every lamp from the context's answers).
    expect(stored.map((r: { name: string; context_id: number; boost: number }) => [r.name, r.context_id, r.boost])).toEqual([['checkout rule', id, 2]]);
    // The other pickers read the same whole list.
    await go('Search playground', 'Search playground');
    await eventually('every context and "None" in the playground', async () => (await page.getByLabel('Context', { exact: true }).locator('option').count()) === 105);
  });

  it('creates a rule for a segment from a time, then edits its boost and window in place, sending only what changed', async () => {
    const ctx = await post('/api/contexts', { name: 'rule edits' });
    const seg = await post('/api/segments', { name: 'buyers', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    await go('Rules', 'Rules');
    await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    const create = page.getByRole('form', { name: 'New rule' });
    await create.getByLabel('Rule name').fill('lamps for buyers');
    await create.getByLabel('Condition field').fill('category');
    await create.getByLabel('Condition value').fill('lamps');
    await create.getByLabel('Boost').fill('3');
    await create.getByLabel('For').selectOption(String(seg.id));
    await create.getByLabel('From').fill('2030-01-02T03:04');
    // The times are typed in the browser's zone, and the form says which.
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    await visible(create.getByText(`blank: no start; ${zone} time`, { exact: true }));
    await create.getByRole('button', { name: 'Create rule' }).click();
    const table = page.getByRole('table', { name: 'Rules' });
    await visible(table.getByRole('cell', { name: 'lamps for buyers', exact: true }));
    const stored = async () => (await t.demo.platform('GET', `/api/rules?contextId=${ctx.id}`)).body.data[0];
    const made = await stored();
    // The browser's zone is this process's: the same local time.
    const from = Math.floor(new Date('2030-01-02T03:04').getTime() / 1000);
    expect(made).toMatchObject({ name: 'lamps for buyers', conditions: [{ field: 'category', op: 'eq', value: 'lamps' }], boost: 3, segment_id: seg.id, starts_at: from, ends_at: null });
    await visible(table.getByRole('cell', { name: `segment buyers (#${seg.id})` }));

    // Meanwhile the rule is renamed elsewhere: the edit sends the boost and window it changed, not the name it showed.
    await table.getByRole('button', { name: 'Edit lamps for buyers' }).click();
    // Named by the rule as the list last read shows it: renamed below, once the refused save reads it again.
    const edit = page.getByRole('form', { name: /^Edit rule / });
    expect(await edit.getByLabel('Rule name').inputValue()).toBe('lamps for buyers');
    expect(await edit.getByLabel('Condition value').inputValue()).toBe('lamps');
    expect(await edit.getByLabel('Boost').inputValue()).toBe('3');
    expect(await edit.getByLabel('For').inputValue()).toBe(String(seg.id));
    expect(await edit.getByLabel('From').inputValue()).toBe('2030-01-02T03:04');
    expect((await t.demo.platform('PATCH', `/api/rules/${made.id}`, { name: 'renamed elsewhere' })).status).toBe(200);
    await edit.getByLabel('Boost').fill('5');
    // Refused (its end before its start): the reason shows in the form, what was typed kept (it showed below the New rule form).
    await edit.getByLabel('Until').fill('2029-12-31T00:00');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await visible(edit.getByRole('alert').getByText('ends_at must be after starts_at', { exact: false }));
    expect(await edit.getByLabel('Boost').inputValue()).toBe('5');
    await edit.getByLabel('From').fill('');
    await edit.getByLabel('Until').fill('2031-05-06T07:08');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/rules/${made.id}`));
    await edit.getByRole('button', { name: 'Save rule' }).click();
    expect((await sent).postDataJSON()).toEqual({ boost: 5, starts_at: null, ends_at: Math.floor(new Date('2031-05-06T07:08').getTime() / 1000) });
    await eventually('the edit form closed', async () => (await edit.count()) === 0);
    expect(await stored()).toMatchObject({ name: 'renamed elsewhere', conditions: made.conditions, boost: 5, segment_id: seg.id, starts_at: null });
    await visible(table.getByRole('cell', { name: '5', exact: true }));

    // A rule of two conditions (made through the API) keeps them: the form says them and sends none; saved unchanged, nothing is sent.
    const two = await post('/api/rules', {
      name: 'two conditions',
      context_id: ctx.id,
      conditions: [
        { field: 'category', op: 'eq', value: 'lamps' },
        { field: 'name', op: 'neq', value: 'Desk lamp 1' },
      ],
      boost: 2,
    });
    await go('Overview', 'Overview');
    await go('Rules', 'Rules');
    await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    await table.getByRole('button', { name: 'Edit two conditions' }).click();
    const edit2 = page.getByRole('form', { name: 'Edit rule two conditions' });
    await visible(edit2.getByText('Conditions, kept as they are: category eq "lamps" and name neq "Desk lamp 1".'));
    expect(await edit2.getByLabel('Condition field').count()).toBe(0);
    let patches = 0;
    const count = (r: Request) => {
      if (r.method() === 'PATCH') patches += 1;
    };
    page.on('request', count);
    try {
      await edit2.getByRole('button', { name: 'Save rule' }).click();
      await eventually('the edit form closed', async () => (await edit2.count()) === 0);
    } finally {
      page.off('request', count);
    }
    expect(patches).toBe(0);
    await table.getByRole('button', { name: 'Edit two conditions' }).click();
    await edit2.getByLabel('Rule name').fill('still two conditions');
    await edit2.getByRole('button', { name: 'Save rule' }).click();
    await visible(table.getByRole('cell', { name: 'still two conditions', exact: true }));
    expect((await t.demo.platform('GET', `/api/rules/${two.id}`)).body.conditions).toEqual(two.conditions);
    // The tests below find the tenant without segments.
    for (const path of [`/api/rules/${made.id}`, `/api/rules/${two.id}`, `/api/segments/${seg.id}`]) expect((await t.demo.platform('DELETE', path)).status).toBe(200);
  });

  it("sends a rule's boost alone when its condition is read back with its keys in another order (DynamoDB keeps a map's in none)", async () => {
    const ctx = await post('/api/contexts', { name: 'key order' });
    const rule = await post('/api/rules', { name: 'tents lifted', context_id: ctx.id, conditions: [{ field: 'category', op: 'in', value: ['tents', 42] }], boost: 2 });
    // The list answered as a store may read it: each condition's keys value, op, field.
    await page.route(`**/api/rules?*contextId=${ctx.id}*`, async (r) => {
      const answer = await r.fetch();
      const body = (await answer.json()) as { data: { conditions: Record<string, unknown>[] }[] };
      for (const x of body.data) x.conditions = x.conditions.map((c) => ({ value: c.value, op: c.op, field: c.field }));
      await r.fulfill({ response: answer, json: body });
    });
    try {
      await go('Overview', 'Overview');
      await go('Rules', 'Rules');
      await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
      const table = page.getByRole('table', { name: 'Rules' });
      await table.getByRole('button', { name: 'Edit tents lifted' }).click();
      const edit = page.getByRole('form', { name: 'Edit rule tents lifted' });
      expect(await edit.getByLabel('Condition value').inputValue()).toBe('tents, 42');
      await edit.getByLabel('Boost').fill('4');
      const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/rules/${rule.id}`));
      await edit.getByRole('button', { name: 'Save rule' }).click();
      // Was also the condition, unchanged: sent back over any change made to it elsewhere meanwhile.
      expect((await sent).postDataJSON()).toEqual({ boost: 4 });
      await eventually('the edit form closed', async () => (await edit.count()) === 0);
    } finally {
      await page.unroute(`**/api/rules?*contextId=${ctx.id}*`);
    }
    expect((await t.demo.platform('DELETE', `/api/rules/${rule.id}`)).status).toBe(200);
  });

  it("closes a rule's edit form when the address changes the context (the navigation's Rules link)", async () => {
    const ctx = await post('/api/contexts', { name: 'left behind' });
    const rule = await post('/api/rules', { name: 'edited elsewhere', context_id: ctx.id, conditions: [], boost: 2 });
    await go('Overview', 'Overview');
    await go('Rules', 'Rules');
    await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    await page.getByRole('table', { name: 'Rules' }).getByRole('button', { name: 'Edit edited elsewhere' }).click();
    const edit = page.getByRole('form', { name: 'Edit rule edited elsewhere' });
    await visible(edit);
    // The link names no context: the page shows the first, whose rules do not hold this one.
    await go('Rules', 'Rules');
    await eventually('the first context chosen', async () => (await page.getByLabel('Context', { exact: true }).inputValue()) !== String(ctx.id));
    await visible(page.getByRole('table', { name: 'Rules' }).or(page.getByText('No rules in this context.')));
    // Was still open under the other context's rules.
    expect(await edit.count()).toBe(0);
    expect((await t.demo.platform('DELETE', `/api/rules/${rule.id}`)).status).toBe(200);
    // The test below reads the Rules page anew.
    await go('Overview', 'Overview');
  });

  it('lists rules past 100 with "Load more", keeps them on screen after a change, and deletes one only when confirmed', async () => {
    const first = (await t.demo.platform('GET', '/api/contexts?limit=1')).body.data[0];
    for (let i = 1; i <= 101; i++) await post('/api/rules', { name: `rule ${i}`, context_id: first.id, conditions: [], boost: 2 });
    await go('Rules', 'Rules');
    await page.getByLabel('Context', { exact: true }).selectOption(String(first.id));
    const rows = page.getByRole('table', { name: 'Rules' }).getByRole('row');
    await eventually('the first 100 rules', async () => (await rows.count()) === 101); // and the header
    await page.getByRole('button', { name: 'Load more' }).click();
    await eventually('all 101 rules', async () => (await rows.count()) === 102);
    const last = rows.filter({ has: page.getByRole('cell', { name: 'rule 101', exact: true }) });
    await last.getByRole('button', { name: 'Disable rule 101' }).click();
    await visible(last.getByRole('cell', { name: 'no', exact: true }));
    expect(await rows.count()).toBe(102);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    const ruleIds = async () => ((await t.demo.platform('GET', `/api/rules?contextId=${first.id}&limit=100`)).body.data as { name: string }[]).map((r) => r.name);
    let asked = answerNext(false);
    await rows
      .filter({ has: page.getByRole('cell', { name: 'rule 1', exact: true }) })
      .getByRole('button', { name: 'Delete rule 1' })
      .click();
    expect(asked()).toMatch(/^confirm: Delete rule rule 1 /);
    await page.waitForTimeout(500);
    expect(await ruleIds()).toContain('rule 1');
    asked = answerNext(true);
    await rows
      .filter({ has: page.getByRole('cell', { name: 'rule 1', exact: true }) })
      .getByRole('button', { name: 'Delete rule 1' })
      .click();
    expect(asked()).toMatch(/^confirm: /);
    await eventually('rule 1 gone', async () => (await rows.count()) === 101);
    expect(await ruleIds()).not.toContain('rule 1');
  });

  it("edits a segment's name, description and definition in place, sending only what changed; one of all / any keeps its definition", async () => {
    const leaf = await post('/api/segments', { name: 'browsers', definition: { event_type: 'view', min_count: 1, within_days: 7 } });
    const both = await post('/api/segments', {
      name: 'both',
      definition: {
        all: [
          { event_type: 'view', min_count: 2, within_days: 7 },
          { event_type: 'purchase', min_count: 1, within_days: 30 },
        ],
      },
    });
    await go('Segments', 'Segments');
    const table = page.getByRole('table', { name: 'Segments' });
    await table.getByRole('button', { name: 'Edit browsers' }).click();
    const edit = page.getByRole('form', { name: 'Edit segment browsers' });
    expect(await edit.getByLabel('Event type').inputValue()).toBe('view');
    expect(await edit.getByLabel('Within (days)').inputValue()).toBe('7');
    await edit.getByLabel('Description').fill('looked three times this week');
    await edit.getByLabel('At least (events)').fill('3');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/segments/${leaf.id}`));
    await edit.getByRole('button', { name: 'Save segment' }).click();
    expect((await sent).postDataJSON()).toEqual({ description: 'looked three times this week', definition: { event_type: 'view', min_count: 3, within_days: 7 } });
    await visible(table.getByRole('cell', { name: '{"event_type":"view","min_count":3,"within_days":7}' }));
    expect(await edit.count()).toBe(0);

    await table.getByRole('button', { name: 'Edit both' }).click();
    const edit2 = page.getByRole('form', { name: 'Edit segment both' });
    await visible(edit2.getByText('Definition, kept as it is:', { exact: false }));
    expect(await edit2.getByLabel('Event type').count()).toBe(0);
    await edit2.getByLabel('Segment name').fill('viewers who bought');
    const renamed = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/segments/${both.id}`));
    await edit2.getByRole('button', { name: 'Save segment' }).click();
    expect((await renamed).postDataJSON()).toEqual({ name: 'viewers who bought' });
    await visible(table.getByRole('cell', { name: 'viewers who bought', exact: true }));
    expect((await t.demo.platform('GET', `/api/segments/${both.id}`)).body.definition).toEqual(both.definition);
    // The test below finds the tenant without segments, and reads the Segments page anew.
    for (const s of [leaf, both]) expect((await t.demo.platform('DELETE', `/api/segments/${s.id}`)).status).toBe(200);
    await go('Overview', 'Overview');
  });

  it('deletes a segment and a synonym set only when confirmed', async () => {
    await post('/api/segments', { name: 'buyers', description: '', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    await go('Segments', 'Segments');
    const segments = page.getByRole('table', { name: 'Segments' });
    await visible(segments.getByRole('cell', { name: 'buyers', exact: true }));
    let asked = answerNext(false);
    await segments.getByRole('button', { name: 'Delete buyers' }).click();
    expect(asked()).toMatch(/^confirm: Delete segment buyers /);
    await page.waitForTimeout(500);
    expect((await t.demo.platform('GET', '/api/segments')).body.data).toHaveLength(1);
    asked = answerNext(true);
    await segments.getByRole('button', { name: 'Delete buyers' }).click();
    expect(asked()).toMatch(/^confirm: /);
    await visible(page.getByText('No segments yet.'));
    expect((await t.demo.platform('GET', '/api/segments')).body.data).toEqual([]);

    await post('/api/synonyms', { synonyms: ['lamp', 'light'] });
    await go('Synonyms & analytics', 'Synonyms & analytics');
    const sets = page.getByRole('table', { name: 'Synonym sets' });
    await visible(sets.getByRole('cell', { name: 'lamp = light' }));
    asked = answerNext(false);
    await sets.getByRole('button', { name: 'Delete lamp = light' }).click();
    expect(asked()).toMatch(/^confirm: Delete the synonym set lamp = light/);
    await page.waitForTimeout(500);
    expect((await t.demo.platform('GET', '/api/synonyms')).body.data).toHaveLength(1);
    asked = answerNext(true);
    await sets.getByRole('button', { name: 'Delete lamp = light' }).click();
    await visible(page.getByText('No synonym sets yet.'));
    expect((await t.demo.platform('GET', '/api/synonyms')).body.data).toEqual([]);
  });

  it('edits a synonym set in place: its phrases, then its type (the input kept among the phrases), sending only what changed', async () => {
    const set = await post('/api/synonyms', { type: 'one_way', input: 'parka', synonyms: ['jacket', 'coat'] });
    await go('Overview', 'Overview');
    await go('Synonyms & analytics', 'Synonyms & analytics');
    const sets = page.getByRole('table', { name: 'Synonym sets' });
    await sets.getByRole('button', { name: 'Edit parka → jacket, coat' }).click();
    const edit = page.getByRole('form', { name: 'Edit synonym set parka → jacket, coat' });
    expect(await edit.getByLabel('Input').inputValue()).toBe('parka');
    await edit.getByLabel('Phrases').fill('jacket, coat, anorak');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/synonyms/${set.id}`));
    await edit.getByRole('button', { name: 'Save synonyms' }).click();
    expect((await sent).postDataJSON()).toEqual({ synonyms: ['jacket', 'coat', 'anorak'] });
    await visible(sets.getByRole('cell', { name: 'parka → jacket, coat, anorak', exact: true }));

    await sets.getByRole('button', { name: 'Edit parka → jacket, coat, anorak' }).click();
    const edit2 = page.getByRole('form', { name: 'Edit synonym set parka → jacket, coat, anorak' });
    await edit2.getByLabel('Synonym type').selectOption('two_way');
    expect(await edit2.getByLabel('Phrases').inputValue()).toBe('parka, jacket, coat, anorak');
    const sent2 = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/synonyms/${set.id}`));
    await edit2.getByRole('button', { name: 'Save synonyms' }).click();
    expect((await sent2).postDataJSON()).toEqual({ type: 'two_way', input: null, synonyms: ['parka', 'jacket', 'coat', 'anorak'] });
    await visible(sets.getByRole('cell', { name: 'parka = jacket = coat = anorak', exact: true }));
    // A refused save (a phrase of stop words only) shows beside the form, what was typed kept.
    await sets.getByRole('button', { name: 'Edit parka = jacket = coat = anorak' }).click();
    const edit3 = page.getByRole('form', { name: 'Edit synonym set parka = jacket = coat = anorak' });
    await edit3.getByLabel('Phrases').fill('parka, the');
    await edit3.getByRole('button', { name: 'Save synonyms' }).click();
    await visible(edit3.getByRole('alert').getByText('stop words', { exact: false }));
    expect(await edit3.getByLabel('Phrases').inputValue()).toBe('parka, the');
    await edit3.getByRole('button', { name: 'Cancel' }).click();
    expect((await t.demo.platform('DELETE', `/api/synonyms/${set.id}`)).status).toBe(200);
    await go('Overview', 'Overview');
  });

  it('keeps a phrase holding a comma whole when a synonym set is edited (its input changed, then its type)', async () => {
    // The API takes a phrase holding a comma; the form shows the phrases separated by commas.
    const set = await post('/api/synonyms', { type: 'one_way', input: 'puzzle', synonyms: ['1,000 piece puzzle', 'jigsaw'] });
    await go('Overview', 'Overview');
    await go('Synonyms & analytics', 'Synonyms & analytics');
    const sets = page.getByRole('table', { name: 'Synonym sets' });
    await sets.getByRole('button', { name: 'Edit puzzle → 1,000 piece puzzle, jigsaw' }).click();
    const edit = page.getByRole('form', { name: 'Edit synonym set puzzle → 1,000 piece puzzle, jigsaw' });
    await edit.getByLabel('Input').fill('brainteaser');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/synonyms/${set.id}`));
    await edit.getByRole('button', { name: 'Save synonyms' }).click();
    // The phrases untouched are not sent (they were, split at the comma: '1', '000 piece puzzle').
    expect((await sent).postDataJSON()).toEqual({ input: 'brainteaser' });
    await visible(sets.getByRole('cell', { name: 'brainteaser → 1,000 piece puzzle, jigsaw', exact: true }));

    await sets.getByRole('button', { name: 'Edit brainteaser → 1,000 piece puzzle, jigsaw' }).click();
    const edit2 = page.getByRole('form', { name: 'Edit synonym set brainteaser → 1,000 piece puzzle, jigsaw' });
    await edit2.getByLabel('Synonym type').selectOption('two_way');
    expect(await edit2.getByLabel('Phrases').inputValue()).toBe('brainteaser, 1,000 piece puzzle, jigsaw');
    const sent2 = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/synonyms/${set.id}`));
    await edit2.getByRole('button', { name: 'Save synonyms' }).click();
    expect((await sent2).postDataJSON()).toEqual({ type: 'two_way', input: null, synonyms: ['brainteaser', '1,000 piece puzzle', 'jigsaw'] });
    await visible(sets.getByRole('cell', { name: 'brainteaser = 1,000 piece puzzle = jigsaw', exact: true }));
    expect((await t.demo.platform('GET', `/api/synonyms/${set.id}`)).body.synonyms).toEqual(['brainteaser', '1,000 piece puzzle', 'jigsaw']);
    expect((await t.demo.platform('DELETE', `/api/synonyms/${set.id}`)).status).toBe(200);
    await go('Overview', 'Overview');
  });

  it('keeps a form that cannot be sent disabled (an experiment without endpoints), and stops a running experiment only when confirmed (a stopped one cannot run again)', async () => {
    // The tenant has no serving endpoint yet: an experiment cannot be created.
    await go('Experiments', 'Experiments');
    const create = page.getByRole('button', { name: 'Create experiment' });
    await visible(create);
    // Was aria-disabled only, as while a request runs: focusable, and a click asked for the name, then did nothing.
    expect(await create.evaluate((b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);

    for (const endpoint_name of ['main', 'next']) await post('/api/model-endpoints', { endpoint_name });
    const ctx = await post('/api/contexts', { name: 'experiment place' });
    const e = await post('/api/experiments', {
      name: 'blue vs green',
      context_id: ctx.id,
      variants: [
        { name: 'blue', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'green', endpoint_name: 'next', traffic_percent: 50 },
      ],
    });
    expect((await t.demo.platform('PATCH', `/api/experiments/${e.id}`, { status: 'Running' })).status).toBe(200);
    await go('Catalog', 'Catalog');
    await go('Experiments', 'Experiments');
    const stop = page.getByRole('button', { name: 'Stop blue vs green' });
    await visible(stop);
    const status = async () => (await t.demo.platform('GET', `/api/experiments/${e.id}`)).body.status;
    let asked = answerNext(false);
    await stop.click();
    expect(asked()).toMatch(/^confirm: Stop experiment blue vs green /);
    await page.waitForTimeout(500);
    expect(await status()).toBe('Running');
    asked = answerNext(true);
    await stop.click();
    expect(asked()).toMatch(/^confirm: /);
    await eventually('the experiment stopped', async () => (await status()) === 'Stopped');
  });

  it("creates an experiment for a segment's users, and edits a Draft's split, endpoint and window in place, sending only what changed", async () => {
    const seg = await post('/api/segments', { name: 'testers', definition: { event_type: 'view', min_count: 1, within_days: 7 } });
    const ctx = await post('/api/contexts', { name: 'draft place' });
    await go('Catalog', 'Catalog');
    await go('Experiments', 'Experiments');
    const create = page.getByRole('form', { name: 'New experiment' });
    await create.getByLabel('Experiment name').fill('split test');
    await create.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    await create.getByLabel('For').selectOption(String(seg.id));
    // Hundredths (as the API takes them): the control's share is what is left, to the hundredth
    // (100 - 8.04 in binary floating point is 91.96000000000001, which was sent and stored).
    await create.getByLabel('Treatment traffic %').fill('8.04');
    await create.getByRole('button', { name: 'Create experiment' }).click();
    await visible(page.getByText(`For segment testers (#${seg.id}).`));
    const made = (await t.demo.platform('GET', `/api/experiments?contextId=${ctx.id}`)).body.data[0];
    expect(made).toMatchObject({ name: 'split test', segment_id: seg.id, status: 'Draft' });
    expect(made.variants.map((v: { traffic_percent: number }) => v.traffic_percent)).toEqual([91.96, 8.04]);
    await visible(page.getByRole('table', { name: 'Results of split test' }).getByRole('cell', { name: '91.96%', exact: true }));

    await page.getByRole('button', { name: 'Edit split test' }).click();
    const edit = page.getByRole('form', { name: 'Edit experiment split test' });
    expect(await edit.getByLabel('For').inputValue()).toBe(String(seg.id));
    expect(await edit.getByLabel('Attribution window (hours)').inputValue()).toBe('24');
    await edit.getByLabel('control: traffic %').fill('70');
    await edit.getByLabel('treatment: traffic %').fill('30');
    await edit.getByLabel('treatment: endpoint').selectOption('next');
    await edit.getByLabel('Attribution window (hours)').fill('2');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/experiments/${made.id}`));
    await edit.getByRole('button', { name: 'Save experiment' }).click();
    expect((await sent).postDataJSON()).toEqual({
      attribution_window_seconds: 7200,
      variants: [
        { name: 'control', endpoint_name: made.variants[0].endpoint_name, traffic_percent: 70 },
        { name: 'treatment', endpoint_name: 'next', traffic_percent: 30 },
      ],
    });
    await eventually('the edit form closed', async () => (await edit.count()) === 0);
    expect((await t.demo.platform('GET', `/api/experiments/${made.id}`)).body).toMatchObject({ name: 'split test', segment_id: seg.id, attribution_window_seconds: 7200 });
    await visible(page.getByRole('table', { name: 'Results of split test' }).getByRole('cell', { name: '70%' }));
    // The tests below find the tenant without segments.
    expect((await t.demo.platform('DELETE', `/api/segments/${seg.id}`)).status).toBe(409);
    expect((await t.demo.platform('PATCH', `/api/experiments/${made.id}`, { segment_id: null })).status).toBe(200);
    expect((await t.demo.platform('DELETE', `/api/segments/${seg.id}`)).status).toBe(200);
  });

  it("sends a Draft's edit against the Draft as the form showed it: a rename made elsewhere, read again by a refused save, stands", async () => {
    const ctx = await post('/api/contexts', { name: 'stale draft place' });
    const made = await post('/api/experiments', {
      name: 'stale draft',
      context_id: ctx.id,
      variants: [
        { name: 'control', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'treatment', endpoint_name: 'next', traffic_percent: 50, rerank: { diversity: 0.3 } },
      ],
    });
    await go('Catalog', 'Catalog');
    await go('Experiments', 'Experiments');
    await page.getByRole('button', { name: 'Edit stale draft' }).click();
    const edit = page.getByRole('form', { name: /^Edit experiment / });
    expect((await t.demo.platform('PATCH', `/api/experiments/${made.id}`, { name: 'renamed meanwhile' })).status).toBe(200);
    // A save the service refuses (120 %) reads the list again: the card shows the name given elsewhere.
    await edit.getByLabel('control: traffic %').fill('70');
    await edit.getByRole('button', { name: 'Save experiment' }).click();
    // Beside the form (it was at the page's top, out of sight of a Draft further down).
    await visible(edit.getByRole('alert').getByText('100', { exact: false }));
    await visible(page.getByRole('heading', { name: /^renamed meanwhile · / }));
    expect(await edit.getByLabel('control: traffic %').inputValue()).toBe('70');
    await edit.getByLabel('treatment: traffic %').fill('30');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/experiments/${made.id}`));
    await edit.getByRole('button', { name: 'Save experiment' }).click();
    // Was also { name: 'stale draft' }: the name the form showed, sent back over the rename as a change.
    expect((await sent).postDataJSON()).toEqual({
      variants: [
        { name: 'control', endpoint_name: 'main', traffic_percent: 70 },
        { name: 'treatment', endpoint_name: 'next', traffic_percent: 30, rerank: { diversity: 0.3 } },
      ],
    });
    await eventually('the edit form closed', async () => (await edit.count()) === 0);
    expect((await t.demo.platform('GET', `/api/experiments/${made.id}`)).body).toMatchObject({ name: 'renamed meanwhile', status: 'Draft' });
  });

  it('moves the keyboard focus into an edit form as it opens, and back to its Edit button as it closes (Segments, Experiments)', async () => {
    const seg = await post('/api/segments', { name: 'focus seg', definition: { event_type: 'view', min_count: 1, within_days: 7 } });
    const ctx = await post('/api/contexts', { name: 'focus place' });
    await post('/api/experiments', {
      name: 'focus draft',
      context_id: ctx.id,
      variants: [
        { name: 'control', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'treatment', endpoint_name: 'next', traffic_percent: 50 },
      ],
    });
    /** The focused element: an input by its label, else its text. */
    const focused = () =>
      page.evaluate<string>("(() => { const el = document.activeElement; return el instanceof HTMLInputElement ? `input ${el.labels?.[0]?.textContent}` : (el?.textContent ?? ''); })()");
    await go('Overview', 'Overview');
    for (const [link, edit, form, first] of [
      ['Segments', 'Edit focus seg', 'Edit segment focus seg', 'input Segment name'],
      ['Experiments', 'Edit focus draft', 'Edit experiment focus draft', 'input Experiment name'],
    ] as const) {
      await go(link, link);
      await page.getByRole('button', { name: edit }).focus();
      await page.keyboard.press('Enter');
      await visible(page.getByRole('form', { name: form }));
      // Was the Edit button (Segments: the form opened below the list) or the page's body (Experiments: the button went away).
      await eventually(`the focus on ${first}`, async () => (await focused()) === first);
      await page.getByRole('form', { name: form }).getByRole('button', { name: 'Cancel' }).focus();
      await page.keyboard.press('Enter');
      await eventually('the form closed', async () => (await page.getByRole('form', { name: form }).count()) === 0);
      // Was the page's body: the Cancel button went with the form.
      await eventually(`the focus back on ${edit}`, async () => (await focused()) === edit);
    }
    expect((await t.demo.platform('DELETE', `/api/segments/${seg.id}`)).status).toBe(200);
  });

  it('shows no items of an earlier search under the error of a later one (Catalog)', async () => {
    await go('Catalog', 'Catalog');
    await page.getByLabel('Search items').fill('lamp');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await visible(page.getByRole('heading', { name: '20 items' }));
    await page.getByLabel('Search items').fill('tent');
    await page.getByLabel('Filter field').fill('bad.field!');
    await page.getByLabel('Value').fill('x');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await visible(page.getByRole('alert'));
    expected(problems, /status of 400/); // the refused filter, on purpose
    expect(await page.getByRole('heading', { name: '20 items' }).count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Items' }).count()).toBe(0);
    expect(await page.getByText('Desk lamp 1', { exact: true }).count()).toBe(0);
  });

  it('shows no earlier recommendations under the error of a later request (Playground)', async () => {
    await go('Search playground', 'Search playground');
    await page.getByRole('tab', { name: 'Recommendations' }).click();
    await page.getByLabel('User ID', { exact: true }).fill('u-2');
    await page.getByRole('button', { name: 'Recommend' }).click();
    await visible(page.getByRole('heading', { name: / recommendations · / }));
    await page.getByLabel('Similar to item ID').fill('99999');
    await page.getByRole('button', { name: 'Recommend' }).click();
    await visible(page.getByRole('alert').filter({ hasText: 'No item with id 99999.' }));
    expected(problems, /status of 404/); // the unknown item, on purpose
    expect(await page.getByRole('heading', { name: / recommendations · / }).count()).toBe(0);
    // The search tab's own answer and error are its own: the recommendations' error is not shown there.
    await page.getByRole('tab', { name: 'Search' }).click();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('leaves no empty gap for a brand an item lacks (Playground recommendations and search results)', async () => {
    // The lamps and tents have a category and no brand.
    await go('Search playground', 'Search playground');
    await page.getByRole('tab', { name: 'Recommendations' }).click();
    await page.getByLabel('User ID', { exact: true }).fill('u-2');
    await page.getByLabel('Similar to item ID').fill('');
    await page.getByRole('button', { name: 'Recommend' }).click();
    const recs = page.getByRole('list', { name: 'Recommendations' }).locator('li > .muted');
    await eventually('the recommendations', async () => (await recs.count()) > 0);
    /** The lines with an empty part: two dots side by side, or one at the end. */
    const gaps = async (lines: Locator) => (await lines.allTextContents()).filter((l) => / · ( ·|$)/.test(l));
    // Was "#1 · lamps ·  · popular" (an empty brand between the category and the reason).
    expect(await gaps(recs)).toEqual([]);
    await page.getByRole('tab', { name: 'Search', exact: true }).click();
    await page.getByLabel('Query').fill('lamp');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const hits = page.getByTestId('search-hit').locator('> .muted');
    await eventually('the search results', async () => (await hits.count()) > 0);
    // Was "#1 · lamps · " and an empty brand element.
    expect(await gaps(hits)).toEqual([]);
    expect(await page.getByTestId('item-brand').count()).toBe(0);
  });

  it('a change after signing in again in another tab goes through, and signing out from either ends the session', async () => {
    const other = await page.context().newPage();
    try {
      await other.goto(`${t.base}/console/`);
      await visible(other.getByRole('heading', { level: 1, name: 'Overview' }), 30_000);
      await other.getByRole('button', { name: 'Sign out' }).click();
      await visible(other.getByRole('heading', { name: 'Sign in to the console' }));
      await signIn(other, demoAdmin(t));
      await visible(other.getByRole('heading', { level: 1, name: 'Overview' }));
      // This tab holds the first session's CSRF token: the change is sent again with the current one (was: "Missing or wrong X-CSRF-Token header").
      await go('Events', 'Events');
      await page.getByLabel('Type name').fill('wishlist');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await visible(page.getByRole('table', { name: 'Event types' }).getByRole('cell', { name: 'wishlist', exact: true }));
      expect(await page.getByRole('alert').count()).toBe(0);
      expected(problems, /status of 403/); // the stale token's refusal, answered by the retry
      // Signed in again there once more, then out here: the session ends (was: the failure ignored, the session left standing).
      await other.getByRole('button', { name: 'Sign out' }).click();
      await signIn(other, demoAdmin(t));
      await visible(other.getByRole('heading', { level: 1, name: 'Overview' }));
      await page.getByRole('button', { name: 'Sign out' }).click();
      await visible(page.getByRole('heading', { name: 'Sign in to the console' }));
      expected(problems, /status of 403/);
      await other.reload();
      await visible(other.getByRole('heading', { name: 'Sign in to the console' }));
    } finally {
      await other.close();
    }
    await signIn(page, demoAdmin(t));
    await visible(page.getByRole('heading', { level: 1, name: 'Events' }));
    expected(problems, /status of 401/); // the signed-out tab's session check
  });

  it("a change after the same user, demoted meanwhile, signed in again in another tab is refused as a viewer's, not taken for someone else's", async () => {
    // Found by a review (2026-12-05): the tab compared the role too, and told its user that someone
    // else had signed in, signing them out.
    const users = dynamoConsoleUserStore(makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1'));
    const email = t.stack.credentials.console_email as string;
    const password = t.stack.credentials.console_password as string;
    await go('Events', 'Events');
    await putLocalUser(users, { email, tenant: 'demo', role: 'viewer' }, password);
    const other = await page.context().newPage();
    try {
      await other.goto(`${t.base}/console/`);
      await visible(other.getByRole('heading', { level: 1, name: 'Overview' }), 30_000);
      await other.getByRole('button', { name: 'Sign out' }).click();
      await signIn(other, { email, password });
      await visible(other.getByRole('heading', { level: 1, name: 'Overview' }));
      await page.getByLabel('Type name').fill('demoted_meanwhile');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await visible(page.getByRole('alert').filter({ hasText: 'A viewer may only read' }));
      expect(await page.getByRole('status').filter({ hasText: 'Someone else signed in' }).count()).toBe(0);
      // And the tab shows the viewer it now is: no admin's controls (a review, 2026-12-05: the
      // session read again was held, but the page kept the admin's).
      await visible(page.getByText('tenant demo · viewer'));
      expect(await page.getByRole('button', { name: 'Add event type' }).count()).toBe(0);
      expected(problems, /status of 403/);
    } finally {
      await other.close();
      await putLocalUser(users, { email, tenant: 'demo', role: 'admin' }, password);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, { email, password });
    await visible(page.getByRole('heading', { level: 1, name: 'Events' }));
  });

  it("shows the viewer a demoted admin's own session became at its check once a change is refused, not an admin's controls", async () => {
    // Found by a review (2026-12-05): only a session replaced in another tab was read again; the
    // same session demoted by its check (no new sign-in) kept the admin's controls on screen,
    // every change refused with "A viewer may only read".
    const table = makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1');
    const users = dynamoConsoleUserStore(table);
    const sessions = dynamoConsoleSessionStore(table);
    const email = t.stack.credentials.console_email as string;
    const password = t.stack.credentials.console_password as string;
    await go('Events', 'Events');
    await visible(page.getByText('tenant demo · admin'));
    await putLocalUser(users, { email, tenant: 'demo', role: 'viewer' }, password);
    try {
      // The session's check is due (as 5 minutes after the last one).
      const id = (await page.context().cookies()).find((c) => c.name === 'rs_console_session')?.value as string;
      const stored = (await sessions.get(sha256Hex(id))) as ConsoleSession;
      await sessions.put(sha256Hex(id), { ...stored, checked_at: Math.floor(Date.now() / 1000) - 600 });
      await page.getByLabel('Type name').fill('demoted_here');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await visible(page.getByRole('alert').filter({ hasText: 'A viewer may only read' }));
      await visible(page.getByText('tenant demo · viewer'));
      expect(await page.getByRole('button', { name: 'Add event type' }).count()).toBe(0);
      expected(problems, /status of 403/);
    } finally {
      await putLocalUser(users, { email, tenant: 'demo', role: 'admin' }, password);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, { email, password });
    await visible(page.getByRole('heading', { level: 1, name: 'Events' }));
  });

  it("sends nothing for another user signed in in another tab: this tab signs in anew (a change went to the other user's tenant)", async () => {
    await go('Events', 'Events');
    await withOtherTenantTab(async (other) => {
      await page.getByLabel('Type name').fill('made_in_tab_a');
      await page.getByRole('button', { name: 'Add event type' }).click();
      await visible(page.getByRole('status').filter({ hasText: 'Someone else signed in to the console in another tab' }));
      expected(problems, /status of 403/);
      const theirs = await other.evaluate(async () => ((await (await fetch('/api/event-types')).json()) as { data: { name: string }[] }).data.map((e) => e.name));
      expect(theirs).not.toContain('made_in_tab_a');
      expect(((await t.demo.platform('GET', '/api/event-types')).body.data as { name: string }[]).map((e) => e.name)).not.toContain('made_in_tab_a');
    });
  });

  it("shows no other tenant's data under this tab's user and tenant when another tab signs in as another tenant's user: this tab says so and signs in anew", async () => {
    await go('Catalog', 'Catalog');
    await visible(page.getByText('tenant demo', { exact: false }));
    await withOtherTenantTab(async (other) => {
      // Something only the other tenant has, which this tab's Events page would list.
      const added = await other.evaluate(async () => {
        const s = (await (await fetch('/console/session')).json()) as { csrf_token: string };
        const r = await fetch('/api/event-types', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrf_token },
          body: JSON.stringify({ name: 'only_in_other', weight: 1 }),
        });
        return r.status;
      });
      expect(added).toBe(201);
      // This tab, still labelled with the demo admin and tenant, reads on: it must not show the other tenant's event types (was: listed under "tenant demo").
      await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Events', exact: true }).click();
      await visible(page.getByRole('status').filter({ hasText: 'Someone else signed in to the console in another tab' }));
      await visible(page.getByRole('heading', { name: 'Sign in to the console' }));
      expect(await page.getByText('only_in_other').count()).toBe(0);
      expect(await page.getByText('tenant demo', { exact: false }).count()).toBe(0);
      expected(problems, /status of 403/); // the reads refused for the replaced session's token
    });
    await visible(page.getByText('tenant demo', { exact: false }));
    expect(await page.getByText('only_in_other').count()).toBe(0);
  });

  it('says the session ended when a change finds it over, and that the service is unreachable rather than showing sign-in', async () => {
    await go('Events', 'Events');
    // Signed out elsewhere (the cookie's session deleted).
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const csrf = await page.evaluate(async () => ((await (await fetch('/console/session')).json()) as { csrf_token: string }).csrf_token);
    expect((await fetch(`${t.base}/console/session`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status).toBe(204);
    await page.getByLabel('Type name').fill('late');
    await page.getByRole('button', { name: 'Add event type' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Your session has ended' }));
    expected(problems, /status of 401/);
    // The service unreachable at load: said so, with a way to try again; not the sign-in form.
    await page.route('**/console/session', (r) => r.abort());
    await page.reload();
    await visible(page.getByRole('alert').filter({ hasText: 'The console could not read your session: The service could not be reached' }));
    expect(await page.getByRole('heading', { name: 'Sign in to the console' }).count()).toBe(0);
    expected(problems, /ERR_FAILED/);
    await page.unroute('**/console/session');
    await page.getByRole('button', { name: 'Try again' }).click();
    await visible(page.getByRole('heading', { name: 'Sign in to the console' }));
    expected(problems, /status of 401/);
    await signIn(page, demoAdmin(t));
    await visible(page.getByRole('heading', { level: 1, name: 'Events' }));
  });

  it('sends a double-clicked action once, and shows weights changed elsewhere after a reload (a blur sends nothing)', async () => {
    const ctx = await post('/api/contexts', { name: 'double click' });
    const rule = await post('/api/rules', { name: 'clicked twice', context_id: ctx.id, conditions: [], boost: 2 });
    await go('Rules', 'Rules');
    await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    const row = page
      .getByRole('table', { name: 'Rules' })
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'clicked twice', exact: true }) });
    await row.getByRole('button', { name: 'Disable clicked twice' }).dblclick();
    await visible(row.getByRole('cell', { name: 'no', exact: true }));
    await page.waitForTimeout(500);
    const audit = (await t.demo.platform('GET', `/api/audit?resource=rules/${rule.id}`)).body.data as { action: string; actor: string }[];
    expect(audit.map((a) => a.action)).toEqual(['update', 'create']);
    expect(await page.getByRole('alert').count()).toBe(0);
    // A long name without spaces wraps, or its table scrolls in its own box: the page stays as wide as the window (was 6,842 px at 1,280).
    await post('/api/rules', { name: 'W'.repeat(256), context_id: ctx.id, conditions: [], boost: 2 });
    const otherCtx = await post('/api/contexts', { name: 'other' });
    await page.reload();
    await visible(page.getByRole('heading', { level: 1, name: 'Rules' }));
    await eventually('the new contexts in the picker', async () => (await page.getByLabel('Context', { exact: true }).locator(`option[value="${otherCtx.id}"]`).count()) === 1);
    await page.getByLabel('Context', { exact: true }).selectOption(String(ctx.id));
    await visible(page.getByText('W'.repeat(256), { exact: true }));
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    // The context is kept in the address: Back from a rule's history returns to it (was: the first context).
    await page
      .getByRole('table', { name: 'Rules' })
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'clicked twice', exact: true }) })
      .getByRole('link', { name: 'History' })
      .click();
    await visible(page.getByRole('heading', { level: 1, name: 'Audit history' }));
    // Who made each change, in words: the console user by email, the API key by its prefix (was the raw actor, 'console:<email>').
    const byKey = audit[1]?.actor as string;
    const whoCells = page.getByRole('table', { name: 'Audit entries' }).getByRole('row').locator('td:nth-child(2)');
    await eventually('the history shown', async () => (await whoCells.count()) === 2);
    expect(await whoCells.allTextContents()).toEqual([`${t.stack.credentials.console_email} (console)`, `API key ${byKey}`]);
    await page.goBack();
    await visible(page.getByRole('heading', { level: 1, name: 'Rules' }));
    expect(await page.getByLabel('Context', { exact: true }).inputValue()).toBe(String(ctx.id));
    await visible(page.getByText('W'.repeat(256), { exact: true }));
    // A rule's value is needed for every operator but exists: the form is not sent without one.
    await page.getByLabel('Rule name').fill('no value');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.waitForTimeout(300);
    expect(((await t.demo.platform('GET', `/api/rules?contextId=${ctx.id}`)).body.data as { name: string }[]).map((r) => r.name)).toEqual(['clicked twice', 'W'.repeat(256)]);

    await go('Events', 'Events');
    const view = (await t.demo.platform('GET', '/api/event-types')).body.data.find((e: { name: string }) => e.name === 'wishlist');
    const weight = page.getByLabel('Weight of wishlist');
    await visible(weight);
    expect((await t.demo.platform('PATCH', `/api/event-types/${view.id}`, { weight: 50 })).status).toBe(200);
    await page.getByLabel('Type name').fill('share');
    await page.getByRole('button', { name: 'Add event type' }).click();
    await visible(page.getByRole('table', { name: 'Event types' }).getByRole('cell', { name: 'share', exact: true }));
    await eventually('the weight read again', async () => (await weight.inputValue()) === '50');
    await weight.focus();
    await weight.blur();
    await page.waitForTimeout(500);
    expect((await t.demo.platform('GET', '/api/event-types')).body.data.find((e: { name: string }) => e.name === 'wishlist').weight).toBe(50);
    // Two weights changed while the first change is on its way (a slow network): both are sent (one guard for the page dropped the second).
    await page.route('**/api/event-types/*', async (r) => {
      await new Promise((done) => setTimeout(done, 600));
      await r.continue();
    });
    await weight.fill('7');
    await weight.blur();
    await page.getByLabel('Weight of share').fill('9');
    await page.getByLabel('Weight of share').blur();
    const weights = async () => Object.fromEntries(((await t.demo.platform('GET', '/api/event-types')).body.data as { name: string; weight: number }[]).map((e) => [e.name, e.weight]));
    await eventually('both weights stored', async () => {
      const w = await weights();
      return w.wishlist === 7 && w.share === 9;
    });
    await page.unroute('**/api/event-types/*');
  });

  it('counts every event of the period on the Overview, past the latest 5,000, and shows the catalog size with inactive items', async () => {
    const ids = ((await t.demo.core('GET', '/v1/items?limit=2')).body.data as { id: string }[]).map((x) => x.id);
    await go('Overview', 'Overview');
    const shown = async () => Number((await page.getByTestId('events-total').textContent())?.replace(/,/g, ''));
    await eventually('the events counted', async () => Number.isInteger(await shown()));
    const before = await shown();
    // 5,000 more events today.
    for (let b = 0; b < 10; b++) {
      const events = Array.from({ length: 500 }, (_, i) => ({ type: 'view', user_id: `bulk-${b}-${i}`, item_id: ids[i % 2] }));
      expect((await t.demo.core('POST', '/v1/events', events)).status).toBe(201);
    }
    await go('Catalog', 'Catalog');
    await go('Overview', 'Overview');
    // Was "5,000+" over "at least: only the latest 5,000 events are counted": the older ones of the period went uncounted.
    await eventually('every event counted', async () => (await shown()) === before + 5000);
    await visible(page.getByText('events ingested', { exact: true }));
    // Was "searchable items": the count holds inactive items, which Core search leaves out.
    await visible(page.getByText('items, inactive ones included'));
  });

  it('fits the catalog table, its actions included, in a 1280-pixel window when descriptions are long', async () => {
    const long = 'A sturdy lamp with a long description: '.repeat(20);
    expect((await t.demo.core('POST', '/v1/items', { name: 'Long lamp', description: long, metadata: { category: 'lighting', brand: 'Bean & Barrow', price: 39900 } })).status).toBe(201);
    await page.setViewportSize({ width: 1280, height: 800 });
    await go('Catalog', 'Catalog');
    await visible(page.getByRole('button', { name: 'Deactivate Long lamp' }));
    // Was wider than its frame (by 33 pixels in the demo shop at 1440): the description's 36rem kept the Actions column half out of sight.
    const wrap = page.locator('.table-wrap').first();
    const { scroll, client } = await wrap.evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(scroll).toBeLessThanOrEqual(client);
  });

  it('shows a null price as no value (–), as a null brand, not "null" (Catalog)', async () => {
    expect((await t.demo.core('POST', '/v1/items', { name: 'Priceless lamp', metadata: { category: 'lighting', brand: null, price: null } })).status).toBe(201);
    await searchCatalog('Priceless');
    const row = page.getByRole('table', { name: 'Items' }).getByRole('row').filter({ hasText: 'Priceless lamp' });
    await visible(row);
    const cells = await row.getByRole('cell').allTextContents();
    // ID, Name, Category, Brand, Price, ...
    expect({ brand: cells[3], price: cells[4] }).toEqual({ brand: '–', price: '–' });
  });

  it("words the playground's rerank explanations instead of showing their JSON", async () => {
    const ctx = (await post('/api/contexts', { name: 'one per category' })).id as number;
    expect((await t.demo.platform('PUT', `/api/rerank-controls?contextId=${ctx}`, { max_per_category: 1 })).status).toBe(200);
    await go('Search playground', 'Search playground');
    await page.getByLabel('Context').selectOption({ label: `one per category (#${ctx})` });
    await page.getByLabel('Query').fill('');
    const moved = page.getByText(/max per category: moved from \d+ to \d+/);
    // Control changes serve within 5 s (CONTROL_CACHE_MS): search again until the cap applies.
    await eventually(
      'a result moved up by the cap',
      async () => {
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await page.waitForTimeout(300);
        for (const s of await page.getByText('Why this score').all()) await s.click();
        return (await moved.count()) > 0;
      },
      20_000,
    );
    // Was the API's JSON: {"control":"max_per_category","moved_from":…,"moved_to":…}.
    expect(await page.getByRole('list', { name: 'Search results' }).textContent()).not.toContain('{"control"');
  });

  it("counts one result in the singular, and says when no match has a facet's key (Playground, Catalog)", async () => {
    await go('Search playground', 'Search playground');
    await page.getByLabel('Context').selectOption({ index: 0 });
    await page.getByLabel('Query').fill('sturdy');
    await page.getByRole('textbox', { name: 'Facets' }).fill('category, color');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    // Was "1 matches", and a "color" heading with nothing under it.
    await visible(page.getByRole('heading', { name: '1 match', exact: true }));
    await visible(page.getByRole('region', { name: 'Facet color' }).getByText('No match has this key.'));
    expect(await page.getByRole('region', { name: 'Facet category' }).getByText('No match has this key.').count()).toBe(0);
    await searchCatalog('sturdy');
    await visible(page.getByRole('heading', { name: '1 item', exact: true }));
  });

  it('keeps the keyboard focus on a button while its action runs (a row action, and a failed sign-in)', async () => {
    await searchCatalog('sturdy');
    const deactivate = page.getByRole('button', { name: 'Deactivate Long lamp' });
    await deactivate.focus();
    await page.keyboard.press('Enter');
    const focused = () => page.evaluate('document.activeElement?.textContent');
    await visible(page.getByRole('button', { name: 'Activate Long lamp', exact: true }));
    // Was the page's body: the button, disabled while its request ran, dropped the focus.
    await eventually('the focus on Activate', async () => (await focused()) === 'Activate Long lamp');
    // While its request runs the button says it is busy (aria-busy), not only that it cannot be pressed.
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    await page.route('**/console/api/items/*', async (r) => {
      await held;
      await r.fallback();
    });
    try {
      await page.keyboard.press('Enter');
      const busy = page.getByRole('button', { name: 'Activate Long lamp', exact: true });
      await eventually('Activate busy', async () => (await busy.getAttribute('aria-busy')) === 'true');
      expect(await busy.getAttribute('aria-disabled')).toBe('true');
    } finally {
      release();
      await page.unroute('**/console/api/items/*');
    }
    await visible(page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }));
    expect(await page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }).getAttribute('aria-busy')).toBeNull();
    await eventually('the focus on Deactivate', async () => (await focused()) === 'Deactivate Long lamp');

    const other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const p = await other.newPage();
      await p.goto(`${t.base}/console/`);
      await visible(p.getByRole('heading', { name: 'Sign in to the console' }));
      await p.getByLabel('Email').fill(t.stack.credentials.console_email as string);
      await p.getByLabel('Password').fill('not the password');
      await p.getByRole('button', { name: 'Sign in' }).focus();
      await p.keyboard.press('Enter');
      await visible(p.getByRole('alert').getByText('Wrong email or password.'));
      await eventually('the focus on Sign in', async () => (await p.evaluate('document.activeElement?.textContent')) === 'Sign in');
    } finally {
      await other.close();
    }
  });

  it('shows an item as stored after Deactivate when a search sent before it answers after it (Catalog)', async () => {
    await searchCatalog('sturdy');
    await visible(page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }));
    // The next search is served at once (the lamp still active) but its answer reaches the page
    // only after the lamp is deactivated.
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    await page.route('**/api/items/search', async (r) => {
      const response = await r.fetch();
      await held;
      await r.fulfill({ response });
    });
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/items/search'));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForTimeout(300);
    const patched = page.waitForResponse((r) => r.url().includes('/console/api/items/') && r.request().method() === 'PATCH');
    await page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }).click();
    await patched;
    await visible(page.getByRole('button', { name: 'Activate Long lamp', exact: true }));
    release();
    await answered;
    await page.unroute('**/api/items/search');
    await page.waitForTimeout(300);
    // Was Deactivate again: the search's answer put the lamp back as it was when served.
    await visible(page.getByRole('button', { name: 'Activate Long lamp', exact: true }));
    expect(await page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Activate Long lamp', exact: true }).click();
    await visible(page.getByRole('button', { name: 'Deactivate Long lamp', exact: true }));
  });

  it('keeps the keyboard focus on Save controls (Rerank) while the save runs', async () => {
    await go('Rerank controls', 'Rerank controls');
    const save = page.getByRole('button', { name: 'Save controls' });
    await visible(save);
    await save.focus();
    await page.keyboard.press('Enter');
    await visible(page.getByText('Saved.', { exact: true }));
    // Was the page's body: the button, disabled while the save ran, dropped the focus (7d662c2 left this one out).
    await eventually('the focus on Save controls', async () => (await page.evaluate('document.activeElement?.textContent')) === 'Save controls');
  });

  it("saves no context's rerank controls to another whose own are being read, or could not be read (Rerank)", async () => {
    const tuned = (await post('/api/contexts', { name: 'tuned' })).id as number;
    const untuned = (await post('/api/contexts', { name: 'untuned' })).id as number;
    expect((await t.demo.platform('PUT', `/api/rerank-controls?contextId=${tuned}`, { diversity: 0.5, max_per_category: 3 })).status).toBe(200);
    // The untuned context's controls answer late, and then fail; what is saved is counted.
    const saves: string[] = [];
    let asked = 0;
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    await page.route('**/api/rerank-controls*', async (r) => {
      if (r.request().method() === 'PUT') saves.push(r.request().url());
      if (r.request().method() !== 'GET' || new URL(r.request().url()).searchParams.get('contextId') !== String(untuned)) return r.fallback();
      asked += 1;
      await held;
      await r.fulfill({ status: 500, json: { error: { code: 'internal', message: 'Controls unavailable.' } } });
    });
    try {
      await go('Catalog', 'Catalog');
      await go('Rerank controls', 'Rerank controls');
      const picker = page.getByLabel('Context', { exact: true });
      const diversity = page.getByLabel('Diversity (0–1)');
      const save = page.getByRole('button', { name: 'Save controls' });
      await picker.selectOption(String(tuned));
      await eventually("the tuned context's diversity", async () => (await diversity.inputValue()) === '0.5');
      await picker.selectOption(String(untuned));
      await eventually("the untuned context's controls asked for", async () => asked === 1);
      // Was the tuned context's values under the untuned one, and Save controls, which put them to it.
      expect(await diversity.count()).toBe(0);
      expect(await save.count()).toBe(0);
      await visible(page.getByText('Loading…', { exact: true }));
      release();
      await visible(page.getByRole('alert').filter({ hasText: 'Controls unavailable.' }));
      expect(await diversity.count()).toBe(0);
      expect(await save.count()).toBe(0);
    } finally {
      release();
      await page.unroute('**/api/rerank-controls*');
    }
    expected(problems, /status of 500/); // the refused read, on purpose
    expect(saves).toEqual([]);
    expect((await t.demo.platform('GET', `/api/rerank-controls?contextId=${untuned}`)).body).toMatchObject({ diversity: null, max_per_category: null });
  });

  it("says when the tenant's event types, offered to the analytics' event type fields, could not be read", async () => {
    await page.route('**/api/event-types*', (r) =>
      r.request().method() === 'GET' ? r.fulfill({ status: 500, json: { error: { code: 'internal', message: 'Event types unavailable.' } } }) : r.fallback(),
    );
    await go('Synonyms & analytics', 'Synonyms & analytics');
    // Was no hint at all: the fields offered nothing, and nothing said why.
    await visible(page.getByText("This tenant's event types could not be read: Event types unavailable.", { exact: true }));
    await page.unroute('**/api/event-types*');
    expected(problems, /status of 500/); // the refused list, on purpose
  });

  it('counts views as clicks in search analytics on a tenant with views and no click events (as the demo shop), until another type is sent', async () => {
    // The tenant's event types with its click type as view: the demo shop's kind.
    const body = (await t.demo.platform('GET', '/api/event-types?limit=100')).body as { data: { name: string }[]; has_more: boolean };
    expect(body.has_more).toBe(false);
    const kept = body.data.filter((e) => e.name !== 'click' && e.name !== 'view');
    body.data = [...kept, { ...(kept[0] as { name: string }), name: 'view' }];
    await page.route('**/api/event-types*', (r) => (r.request().method() === 'GET' ? r.fulfill({ json: body }) : r.fallback()));
    const asked: string[] = [];
    await page.route('**/api/analytics/searches*', (r) => {
      asked.push(new URL(r.request().url()).searchParams.get('click_type') ?? '');
      return r.fallback();
    });
    try {
      await go('Catalog', 'Catalog');
      await go('Synonyms & analytics', 'Synonyms & analytics');
      // Was click, an event type this tenant does not have: no click-through at all.
      await eventually('views as clicks', async () => (await page.getByLabel('Clicks are events of type').inputValue()) === 'view');
      await visible(page.locator('dl[aria-label="Search totals"]'));
      // Asked for once, once the types were read: not with click first.
      expect(asked).toEqual(['view']);
      await page.getByLabel('Clicks are events of type').fill('add_to_cart');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await eventually('the type sent', async () => asked.at(-1) === 'add_to_cart');
      expect(await page.getByLabel('Clicks are events of type').inputValue()).toBe('add_to_cart');
    } finally {
      await page.unroute('**/api/event-types*');
      await page.unroute('**/api/analytics/searches*');
    }
  });

  it("says which of the Overview's figures could not be read, instead of loading them forever", async () => {
    const refuse = (message: string) => (r: Route) => (r.request().method() === 'GET' ? r.fulfill({ status: 500, json: { error: { code: 'internal', message } } }) : r.fallback());
    await page.route('**/console/api/overview*', refuse('Overview unavailable.'));
    await page.route('**/api/models*', refuse('Models unavailable.'));
    try {
      await go('Catalog', 'Catalog');
      await go('Overview', 'Overview');
      // Were "…" for good: the events and models tiles looked still loading, and nothing said the models had failed.
      await eventually('the events tile unread', async () => (await page.getByTestId('events-total').textContent()) === '—not read');
      await visible(page.getByText('Not read: see Events per day.', { exact: true }));
      await eventually('the models tile unread', async () => (await page.getByTestId('model-versions').textContent()) === '—not read');
      await visible(page.getByText('Versions: Models unavailable.', { exact: true }));
      await visible(page.getByText('Overview unavailable.', { exact: true }));
      // The chart's card said "Loading…" under the error, for good (the other cards' reads may still be under way on a loaded machine).
      await eventually('no card still loading', async () => (await page.getByText('Loading…').count()) === 0);
    } finally {
      await page.unroute('**/console/api/overview*');
      await page.unroute('**/api/models*');
    }
    expected(problems, /status of 500/); // the refused reads, on purpose
  });

  it("says when the tenant's contexts could not be read, instead of 'No contexts yet' and 'Create a context first.' (Rules)", async () => {
    await page.route('**/api/contexts*', (r) => (r.request().method() === 'GET' ? r.fulfill({ status: 500, json: { error: { code: 'internal', message: 'Contexts unavailable.' } } }) : r.fallback()));
    try {
      await go('Catalog', 'Catalog');
      await go('Rules', 'Rules');
      // Was no word of it: the picker said "No contexts yet" and the rules "Create a context first.", and an admin made one again.
      await visible(page.getByText('The contexts could not be read: Contexts unavailable.', { exact: true }));
      expect(await page.getByText('Create a context first.').count()).toBe(0);
      expect(await page.getByLabel('Context', { exact: true }).locator('option', { hasText: 'No contexts yet' }).count()).toBe(0);
    } finally {
      await page.unroute('**/api/contexts*');
    }
    expected(problems, /status of 500/); // the refused list, on purpose
  });

  it('counts the values a facet leaves out of its first 8 (Playground)', async () => {
    const colours = ['amber', 'beige', 'coral', 'denim', 'ebony', 'fawn', 'gold', 'hazel', 'ivory', 'jade', 'khaki'];
    const swatches = colours.map((c) => ({ name: `Swatch ${c}`, description: 'A fabric swatch.', metadata: { category: 'swatches', colour: c } }));
    expect((await t.demo.core('POST', '/v1/items', swatches)).status).toBe(201);
    await go('Search playground', 'Search playground');
    await page.getByLabel('Query').fill('swatch');
    await page.getByRole('textbox', { name: 'Facets' }).fill('colour');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const facet = page.getByRole('region', { name: 'Facet colour' });
    await visible(facet.getByText('amber', { exact: false }));
    expect(await facet.getByRole('listitem').count()).toBe(8);
    // Was the first 8 alone: 3 colours out of sight, and nothing said so.
    await visible(facet.getByText('and 3 other values', { exact: true }));
  });

  it('says when the templates, or the event types a new template offers, could not be read (Training runs, Templates)', async () => {
    const refuse = (message: string) => (r: Route) => (r.request().method() === 'GET' ? r.fulfill({ status: 500, json: { error: { code: 'internal', message } } }) : r.fallback());
    await page.route('**/api/events/templates*', refuse('Templates unavailable.'));
    await page.route('**/api/event-types*', refuse('Event types unavailable.'));
    try {
      await go('Training runs', 'Training runs');
      // Was "Publish a template first (Templates page).", and on Templates "Add event types on the Events page first.": nothing said the lists had failed.
      await visible(page.getByText('The templates could not be read: Templates unavailable.', { exact: true }));
      expect(await page.getByText('Publish a template first').count()).toBe(0);
      await go('Templates', 'Templates');
      await visible(page.getByText('The event types could not be read: Event types unavailable.', { exact: true }));
      expect(await page.getByText('Add event types on the Events page first.').count()).toBe(0);
    } finally {
      await page.unroute('**/api/events/templates*');
      await page.unroute('**/api/event-types*');
    }
    expected(problems, /status of 500/); // the refused lists, on purpose
  });

  it("keeps the Overview's index status inside its card in a 1280-pixel window", async () => {
    const built = Math.floor(Date.UTC(2026, 11, 2, 9, 33, 41) / 1000);
    await page.route('**/api/search-index', (r) => r.fulfill({ json: { items: 420, embedded: 420, pending: 0, updated_at: built, index_built_at: built, changes_since_build: 0 } }));
    await page.setViewportSize({ width: 1280, height: 800 });
    try {
      await go('Catalog', 'Catalog');
      await go('Overview', 'Overview');
      const card = page.getByRole('region', { name: 'Index status' });
      await visible(card.getByText('Changes since build'));
      // Was past the card's right edge (the date beside "Changes since build", a column as wide as its longest label).
      const out = await card.evaluate((c) => {
        const edge = c.getBoundingClientRect().right;
        return [...c.querySelectorAll('dd')].filter((d) => d.getBoundingClientRect().right > edge - 1).map((d) => d.textContent);
      });
      expect(out).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.unroute('**/api/search-index');
    }
  });

  it('keeps the page as wide as the window with names and values without spaces (Playground results and facets, an experiment)', async () => {
    const long = { name: `Quilt${'Q'.repeat(400)}`, description: 'A warm quilt.', metadata: { category: 'quilts', brand: 'B'.repeat(300) } };
    expect((await t.demo.core('POST', '/v1/items', long)).status).toBe(201);
    const ctx = (await t.demo.platform('GET', '/api/contexts?limit=1')).body.data[0].id as number;
    await post('/api/experiments', {
      name: 'X'.repeat(200),
      context_id: ctx,
      variants: [
        { name: 'blue', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'green', endpoint_name: 'next', traffic_percent: 50 },
      ],
    });
    const wide = () => page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    await page.setViewportSize({ width: 1280, height: 800 });
    try {
      await go('Search playground', 'Search playground');
      await page.getByLabel('Context').selectOption({ index: 0 });
      await page.getByLabel('Query').fill('quilt');
      await page.getByRole('textbox', { name: 'Facets' }).fill('brand');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await visible(page.getByRole('list', { name: 'Search results' }).getByText(long.name, { exact: true }));
      await visible(page.getByRole('region', { name: 'Facet brand' }).getByText(long.metadata.brand, { exact: false }));
      // Was 4,200 pixels wider than the window: a long name ran out of its card, and a facet's value out of the Facets card.
      expect(await wide()).toBe(0);
      await go('Experiments', 'Experiments');
      await visible(page.getByRole('heading', { name: /^X{200} · / }));
      // Was 1,500 pixels wider: the experiment's card title and its Start button did not wrap.
      expect(await wide()).toBe(0);
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
    }
  });

  it("counts the model versions on the Overview up to 100, not '20+' past the list's default page of 20", async () => {
    // 30 versions, listed as the API lists them: 20 a page unless a limit is asked for.
    const versions = Array.from({ length: 30 }, (_, i) => ({ version: 30 - i }));
    await page.route('**/api/models*', (r) => {
      const limit = Number(new URL(r.request().url()).searchParams.get('limit') ?? 20);
      return r.fulfill({ json: { data: versions.slice(0, limit), has_more: limit < versions.length, next_cursor: limit < versions.length ? String(30 - limit + 1) : null } });
    });
    try {
      await go('Catalog', 'Catalog');
      await go('Overview', 'Overview');
      await eventually('the versions counted', async () => (await page.getByTestId('model-versions').textContent()) !== '…');
      expect(await page.getByTestId('model-versions').textContent()).toBe('30');
    } finally {
      await page.unroute('**/api/models*');
    }
  });

  it('counts the runs in progress (Stopping too) on the Overview past the newest page of runs (and past 100 runs), asking the list for those statuses only', async () => {
    // 230 runs, newest first, listed as the API lists them: 20 a page unless a limit is asked for, after the cursor given, in the status asked for.
    const runs = Array.from({ length: 230 }, (_, i) => ({
      job_name: `run-${230 - i}`,
      status: i === 25 || i === 120 || i === 200 ? 'InProgress' : i === 60 ? 'Queued' : i === 150 ? 'Stopping' : 'Completed',
    }));
    const asked: (string | null)[] = [];
    await page.route('**/api/training-jobs*', (r) => {
      const q = new URL(r.request().url()).searchParams;
      asked.push(q.get('status'));
      const limit = Number(q.get('limit') ?? 20);
      const after = q.get('starting_after');
      const listed = runs.filter((j) => q.get('status') === null || j.status === q.get('status'));
      const from = after ? listed.findIndex((j) => j.job_name === after) + 1 : 0;
      const data = listed.slice(from, from + limit);
      const more = from + limit < listed.length;
      return r.fulfill({ json: { data, has_more: more, next_cursor: more ? data.at(-1)?.job_name : null } });
    });
    try {
      await go('Catalog', 'Catalog');
      await go('Overview', 'Overview');
      const tile = page.getByText(/ runs in progress$/);
      await eventually('the runs counted', async () => !(await tile.textContent())?.includes('…'));
      // Was 0: only the newest 20 runs were read, and the runs in progress were older.
      // A Stopping run has not ended either (the Training page counts it): left out until 2026-12-05.
      expect(await tile.textContent()).toBe('versions; 5 runs in progress');
      // One page per status: until 2026-12-03 every run was read, 100 a page (3 requests here, 1 per 100 runs of a tenant).
      expect(asked.sort()).toEqual(['InProgress', 'Queued', 'Stopping']);
    } finally {
      await page.unroute('**/api/training-jobs*');
    }
  });

  it("shows the filter's events alone when a filter is sent while 'Load more' of the list before it runs (Events)", async () => {
    await go('Events', 'Events');
    const rows = page.getByRole('table', { name: 'Events' }).getByRole('row');
    await eventually('the first 50 events', async () => (await rows.count()) === 51);
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    let more = 0;
    await page.route('**/console/api/events*', async (r) => {
      if (!r.request().url().includes('starting_after=')) return r.fallback();
      more += 1;
      await held;
      await r.fallback();
    });
    try {
      await page.getByRole('button', { name: 'Load more' }).click();
      await eventually('Load more sent', async () => more === 1);
      await page.getByLabel('User ID', { exact: true }).fill('u-1');
      await page.getByRole('button', { name: 'Filter', exact: true }).click();
      await eventually("u-1's event alone", async () => (await rows.count()) === 2);
      release();
      await page.waitForTimeout(800);
      // Was u-1's event and, under it, the next 50 events of everyone (the earlier list's page, appended to the filter's).
      expect(await rows.count()).toBe(2);
      expect(await page.getByRole('table', { name: 'Events' }).getByRole('cell', { name: 'u-1', exact: true }).count()).toBe(1);
    } finally {
      release();
      await page.unroute('**/console/api/events*');
    }
  });

  it('keeps the chosen playground tab readable under the pointer', async () => {
    await go('Search playground', 'Search playground');
    const tab = page.getByRole('tab', { name: 'Search', exact: true });
    await tab.hover();
    const colours = await tab.evaluate((b) => {
      const s = (globalThis as unknown as { getComputedStyle: (e: unknown) => { color: string; backgroundColor: string } }).getComputedStyle(b);
      return { color: s.color, background: s.backgroundColor };
    });
    // Was white text on the hover's near-white background (#eef2f7): the chosen tab's name vanished.
    expect(colours).toEqual({ color: 'rgb(255, 255, 255)', background: 'rgb(29, 78, 216)' });
  });

  it('moves between the playground tabs with the arrow keys, Home and End, the chosen tab alone in the Tab order', async () => {
    await go('Search playground', 'Search playground');
    const tabs = page.getByRole('tablist', { name: 'Playground mode' }).getByRole('tab');
    /** Each tab's name, whether it is chosen, and its tabIndex; and the name of the focused element. */
    const state = async () => ({
      tabs: await tabs.evaluateAll((bs) => bs.map((b) => `${b.textContent} ${b.getAttribute('aria-selected')} ${b.getAttribute('tabindex')}`)),
      focused: await page.evaluate('document.activeElement?.textContent'),
    });
    const search = { tabs: ['Search true 0', 'Recommendations false -1'], focused: 'Search' };
    const recs = { tabs: ['Search false -1', 'Recommendations true 0'], focused: 'Recommendations' };
    await page.getByRole('tab', { name: 'Search', exact: true }).focus();
    // Was: no tabIndex on either tab (both in the Tab order), and the arrow keys, Home and End did nothing.
    expect(await state()).toEqual(search);
    for (const [key, then] of [
      ['ArrowRight', recs],
      ['ArrowRight', search],
      ['ArrowLeft', recs],
      ['ArrowLeft', search],
      ['End', recs],
      ['Home', search],
    ] as const) {
      await page.keyboard.press(key);
      expect(await state(), key).toEqual(then);
    }
    await page.keyboard.press('End');
    await visible(page.getByRole('form', { name: 'Recommendations playground' }));
    // The chosen tab controls the panel that holds its form, a tabpanel named by that tab (was: no
    // tabpanel, no aria-controls); the tab not chosen names no panel (none is shown for it).
    const panel = page.getByRole('tabpanel', { name: 'Recommendations' });
    await visible(panel.getByRole('form', { name: 'Recommendations playground' }));
    expect(await page.getByRole('tab', { name: 'Recommendations' }).getAttribute('aria-controls')).toBe(await panel.getAttribute('id'));
    expect(await page.getByRole('tab', { name: 'Search', exact: true }).getAttribute('aria-controls')).toBeNull();
    // Tab goes from the chosen tab past the other one, to the first field of the chosen tab's form.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.labels?.[0]?.textContent')).toBe('User ID');
  });

  it('marks a filter busy while its request runs (Events, Audit history, Search analytics)', async () => {
    /** `submit` pressed with the requests to `url` held: busy until they answer. */
    const busyWhileSent = async (url: string, submit: Locator) => {
      let release = () => {};
      const held = new Promise<void>((done) => (release = done));
      await page.route(url, async (r) => {
        await held;
        await r.fallback();
      });
      try {
        const answered = page.waitForResponse((r) => r.url().includes(url.replaceAll('*', '')));
        await submit.click();
        // Was neither: the button showed nothing of the request on its way, and took a second press meanwhile.
        await eventually(`${url} busy`, async () => (await submit.getAttribute('aria-busy')) === 'true');
        expect(await submit.getAttribute('aria-disabled')).toBe('true');
        release();
        await answered;
        await eventually(`${url} answered`, async () => (await submit.getAttribute('aria-busy')) === null);
      } finally {
        release();
        await page.unroute(url);
      }
    };
    await go('Events', 'Events');
    await page.getByLabel('User ID', { exact: true }).fill('u-2');
    await busyWhileSent('**/console/api/events*', page.getByRole('button', { name: 'Filter', exact: true }));
    await go('Audit history', 'Audit history');
    await page.getByRole('textbox', { name: 'Resource' }).fill('rules/1');
    await busyWhileSent('**/api/audit*', page.getByRole('button', { name: 'Show history', exact: true }));
    await go('Synonyms & analytics', 'Synonyms & analytics');
    await visible(page.locator('dl[aria-label="Search totals"]'));
    await page.getByLabel('Clicks are events of type').fill('wishlist');
    await busyWhileSent('**/api/analytics/searches*', page.getByRole('button', { name: 'Show', exact: true }));
  });

  it('had no page errors and no console errors', () => {
    expect(problems).toEqual([]);
  });
});
