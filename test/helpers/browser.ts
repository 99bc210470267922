import { chromium, type Browser, type ConsoleMessage, type Locator, type Page } from 'playwright-core';
import type { TestStack } from './stack.ts';

/*
 * The browser tests' shared pieces: Debian's Chromium (never a downloaded browser), one page whose
 * page errors, console errors and failed requests are collected (a test expects none), waiting
 * helpers and the console's navigation.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Chromium with one page; `problems` collects what went wrong on it. */
export async function openBrowser(): Promise<{ browser: Browser; page: Page; problems: string[] }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // An action or a read that cannot find its element fails naming it, before the test's own 30 s
  // time limit says only that the test timed out (Playwright's default is 30 s too).
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() !== 'error') return;
    // The one expected failure: the first visit asks whether a session exists (401 before sign-in).
    if (/status of 401/.test(m.text()) && m.location().url.endsWith('/console/session')) return;
    problems.push(`console.${m.type()}: ${m.text()} (${m.location().url})`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return { browser, page, problems };
}

/** Drops the collected problems that match `pattern` (a failure caused on purpose). */
export function expected(problems: string[], pattern: RegExp): void {
  problems.splice(0, problems.length, ...problems.filter((p) => !pattern.test(p)));
}

/** Waits until `fn` holds (polling), failing with `what`. */
export async function eventually(what: string, fn: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export const visible = (l: Locator, ms = 15_000) => l.first().waitFor({ state: 'visible', timeout: ms });

/** Follows a link of the console's navigation and waits for its page's heading. */
export async function go(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: link, exact: true }).click();
  await visible(page.getByRole('heading', { level: 1, name: heading }));
}

/** Fills the console's sign-in form with `user`'s email and password and sends it. */
export async function signIn(page: Page, user: ConsoleUser): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A console user's sign-in. */
export interface ConsoleUser {
  email: string;
  password: string;
}

/** The stack's demo admin (its credentials file). */
export const demoAdmin = (t: TestStack): ConsoleUser => ({ email: t.stack.credentials.console_email as string, password: t.stack.credentials.console_password as string });

/** Opens `url` (the console, or one of its pages) and waits for the sign-in form: a stack's first page load may take a while. */
export async function openSignIn(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await visible(page.getByRole('heading', { name: 'Sign in to the console' }), 60_000);
}

/** `openSignIn`, then signs in as `user`. */
export async function signInAt(page: Page, url: string, user: ConsoleUser): Promise<void> {
  await openSignIn(page, url);
  await signIn(page, user);
}
