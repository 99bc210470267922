import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAdmin, go, openBrowser, signInAt, visible } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * The console at a phone's width (390 px), found wanting by a black-box review (2026-12-06): the
 * navigation stood as a 180 px column beside every page, leaving it about 200 px, so the page
 * scrolled sideways (the Search playground's tabs by 218 px, off the screen).
 */
let t: TestStack;
let browser: Browser;
let page: Page;
let problems: string[] = [];

beforeAll(async () => {
  t = await startTestStack();
  const ctx = await t.demo.platform('POST', '/api/contexts', { name: 'home', description: '' });
  expect(ctx.status).toBe(201);
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
});
