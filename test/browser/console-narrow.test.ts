import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAdmin, eventually, go, openBrowser, signInAt, visible } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * The console at a phone's width (390 px), found wanting by a black-box review (2026-12-06): the
 * navigation stood as a 180 px column beside every page, leaving it about 200 px, so the page
 * scrolled sideways (the Search playground's tabs by 218 px, off the screen). And by another
 * (2026-12-06) of the edit forms: a segment's definition or a rule's conditions that a form keeps as
 * they are, shown as JSON, widened the page.
 */
let t: TestStack;
let browser: Browser;
let page: Page;
let problems: string[] = [];
let contextId = 0;

const post = async (path: string, body: unknown): Promise<number> => {
  const r = await t.demo.platform('POST', path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as number;
};

beforeAll(async () => {
  t = await startTestStack();
  contextId = await post('/api/contexts', { name: 'home', description: '' });
  ({ browser, page, problems } = await openBrowser());
  await page.setViewportSize({ width: 390, height: 844 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

/** How far the page reaches past the viewport's right edge (0: it does not scroll sideways). */
const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/** The navigation's links, each its page's heading (console/src/pages/index.tsx). */
const PAGES = [
  'Overview',
  'Catalog',
  'Search playground',
  'Events',
  'Templates',
  'Training runs',
  'Model versions',
  'Serving endpoints',
  'Synonyms & analytics',
  'Rules',
  'Segments',
  'Experiments',
  'Rerank controls',
  'API keys & clients',
  'Audit history',
];

describe('the console at 390 px', () => {
  it('signs in', async () => {
    await signInAt(page, `${t.base}/console/`, demoAdmin(t));
    await visible(page.getByRole('heading', { level: 1, name: 'Overview' }));
  });

  it('shows every page within the screen, not scrolled sideways', async () => {
    const wide: string[] = [];
    for (const title of PAGES) {
      await go(page, title, title);
      await page.waitForLoadState('networkidle');
      const by = await overflow();
      if (by > 0) wide.push(`${title}: ${by} px`);
    }
    expect(wide).toEqual([]);
  });

  it("keeps the playground's tabs and the page's heading on the screen", async () => {
    await go(page, 'Search playground', 'Search playground');
    for (const l of [page.getByRole('tab', { name: 'Recommendations' }), page.getByRole('heading', { level: 1, name: 'Search playground' })]) {
      const box = await l.boundingBox();
      expect(box).not.toBeNull();
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
      // Under the navigation, not a screen or more further down.
      expect(box?.y ?? 0).toBeLessThan(844);
    }
    await page.getByRole('tab', { name: 'Recommendations' }).click();
    await visible(page.getByRole('button', { name: 'Recommend' }));
    expect(problems).toEqual([]);
  });

  it('shows each edit form, and the New form beside it, within the screen, every control labelled and reached by Tab', async () => {
    await post('/api/model-endpoints', { endpoint_name: 'main', is_default: true });
    await post('/api/rules', { name: 'lamps first', context_id: contextId, conditions: [{ field: 'category', op: 'eq', value: 'lamps' }], boost: 2 });
    // Conditions the form keeps as they are, shown with each value's JSON: a list of SKUs is one long word.
    await post('/api/rules', {
      name: 'skus lifted',
      context_id: contextId,
      conditions: [
        { field: 'category', op: 'eq', value: 'lamps' },
        { field: 'metadata.sku', op: 'in', value: Array.from({ length: 12 }, (_, i) => `SKU${1000 + i}`) },
      ],
      boost: 2,
    });
    await post('/api/segments', { name: 'browsers', definition: { event_type: 'view', min_count: 1, within_days: 7 } });
    // A definition the form keeps as it is, shown as its JSON: one long word.
    await post('/api/segments', {
      name: 'both',
      definition: {
        all: [
          { event_type: 'view', min_count: 2, within_days: 7 },
          { event_type: 'purchase', min_count: 1, within_days: 30 },
        ],
      },
    });
    await post('/api/synonyms', { type: 'one_way', input: 'parka', synonyms: ['jacket', 'coat'] });
    await post('/api/experiments', {
      name: 'blue vs green',
      context_id: contextId,
      variants: [
        { name: 'blue', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'green', endpoint_name: 'main', traffic_percent: 50 },
      ],
    });
    const forms = [
      ['Rules', 'Edit lamps first', 'Edit rule lamps first', 'New rule'],
      ['Rules', 'Edit skus lifted', 'Edit rule skus lifted', 'New rule'],
      ['Segments', 'Edit browsers', 'Edit segment browsers', 'New segment'],
      ['Segments', 'Edit both', 'Edit segment both', 'New segment'],
      ['Synonyms & analytics', 'Edit parka → jacket, coat', 'Edit synonym set parka → jacket, coat', 'New synonym set'],
      ['Experiments', 'Edit blue vs green', 'Edit experiment blue vs green', 'New experiment'],
    ] as const;
    const wrong: string[] = [];
    for (const [link, button, name, fresh] of forms) {
      await go(page, 'Overview', 'Overview');
      await go(page, link, link);
      const edit = page.getByRole('button', { name: button });
      const form = page.getByRole('form', { name });
      /** Opens the form by keyboard, as a keyboard user does: the focus goes into it. */
      const open = async () => {
        await edit.focus();
        await page.keyboard.press('Enter');
        await visible(form);
        await eventually(`the focus in ${name}`, () => form.evaluate((f) => f.matches(':focus-within')));
      };
      const closed = async () => {
        await eventually(`${name} closed`, async () => (await form.count()) === 0);
        await eventually(`the focus back on ${button}`, () => edit.evaluate((b) => b.matches(':focus')));
      };
      await open();
      const by = await overflow();
      if (by > 0) wrong.push(`${name}: the page ${by} px wide too`);
      for (const f of [form, page.getByRole('form', { name: fresh })]) wrong.push(...(await misplaced(f)).map((c) => `${name}: ${c}`));
      wrong.push(...(await tabbedPast(form)).map((c) => `${name}: ${c} not reached by Tab`));
      await form.getByRole('button', { name: 'Cancel' }).focus();
      await page.keyboard.press('Enter');
      await closed();
      // Saved by Enter in the field the focus went to (nothing changed: nothing is sent).
      await open();
      await page.keyboard.press('Enter');
      await closed();
    }
    expect(wrong).toEqual([]);
    expect(problems).toEqual([]);
  });
});

/** What of a form's controls lies past the screen's edges, or has no label of its own ("input Boost: 12 px past the right edge"). */
async function misplaced(form: Locator): Promise<string[]> {
  await visible(form);
  return form.locator('input, select, button').evaluateAll((els) =>
    els.flatMap((el) => {
      const box = el.getBoundingClientRect();
      const label = el.tagName === 'BUTTON' ? el.textContent : el.ownerDocument.querySelector(`label[for="${el.id}"]`)?.textContent;
      const what = `${el.tagName.toLowerCase()} ${label ?? '(no label)'}`;
      const right = box.right - el.ownerDocument.documentElement.clientWidth;
      return [
        ...(label ? [] : [`${what}: no label`]),
        ...(box.width === 0 ? [`${what}: not shown`] : []),
        ...(box.left < 0 ? [`${what}: ${-box.left} px past the left edge`] : []),
        ...(right > 0 ? [`${what}: ${right} px past the right edge`] : []),
      ];
    }),
  );
}

/** The controls of a form that Tab does not reach from its first (it stops at each in turn to its last, Save or Cancel). */
async function tabbedPast(form: Locator): Promise<string[]> {
  const controls = form.locator('input, select, button');
  const names = await controls.evaluateAll((els) => els.map((el) => el.id || el.textContent || ''));
  await controls.first().focus();
  const reached = new Set<string>();
  // A date and time's input takes a Tab for each of its parts: more presses than controls.
  for (let i = 0; i < names.length * 8; i++) {
    const at = await page.evaluate<string>('document.activeElement?.id || document.activeElement?.textContent || ""');
    reached.add(at);
    if (at === names[names.length - 1]) break;
    await page.keyboard.press('Tab');
  }
  return names.filter((n) => !reached.has(n));
}
