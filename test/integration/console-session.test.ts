import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putLocalUser } from '../../shared/console-auth/identity.ts';
import { makeTable } from '../../shared/data/client.ts';
import { dynamoConsoleUserStore } from '../../shared/data/console-auth.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { request, startTestStack, type Api, type TestStack } from '../helpers/stack.ts';
import { nextSecond } from '../helpers/clock.ts';

// Issue 21 item 3: console sessions. People sign in with email and password; the session
// (an HttpOnly cookie) and its CSRF token stand in for an API key on the Platform API, and an
// API key never reaches a browser.

let t: TestStack;
/** What the console's CloudFront distribution sends in x-origin-verify (deployed: the stack's id). */
const ORIGIN_SECRET = 'test-origin-secret';
beforeAll(async () => {
  // A session's user is read again once its last check is 1 s old (default 300 s).
  t = await startTestStack({ CONSOLE_LOGIN_EMAIL_BURST: '3', CONSOLE_ORIGIN_VERIFY: ORIGIN_SECRET, CONSOLE_USER_CHECK_SECONDS: '1' });
});
afterAll(() => t.stop());

const cookieOf = (r: Api): string => {
  const c = r.headers.get('set-cookie') ?? '';
  return c.split(';')[0] ?? '';
};

async function signIn(email: string, password: string): Promise<{ cookie: string; csrf: string; r: Api }> {
  const r = await request(t.base, 'POST', '/console/session', { body: { email, password } });
  return { cookie: cookieOf(r), csrf: r.body?.csrf_token as string, r };
}

const demoLogin = () => signIn(t.stack.credentials.console_email as string, t.stack.credentials.console_password as string);

describe('console sessions', () => {
  it('writes the demo console user to credentials.json', () => {
    expect(t.stack.credentials.console_email).toMatch(/@/);
    expect(t.stack.credentials.console_password?.length).toBeGreaterThanOrEqual(16);
  });

  it('signs in with the right password: session cookie HttpOnly, Secure, SameSite=Strict; never a key in the body', async () => {
    const { r, csrf } = await demoLogin();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ email: t.stack.credentials.console_email, tenant: 'demo', role: 'admin' });
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(r.body)).not.toContain('svc_');
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^rs_console_session=[A-Za-z0-9_-]{43};/);
    for (const attr of ['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/', 'Max-Age=28800']) expect(cookie).toContain(attr);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a wrong password or an unknown email with 401 in the Platform envelope', async () => {
    const wrong = await signIn(t.stack.credentials.console_email as string, 'not the password');
    expect(wrong.r.status).toBe(401);
    expect(typeof wrong.r.body.error).toBe('string');
    expect(wrong.r.headers.get('set-cookie')).toBeNull();
    const unknown = await signIn('nobody@example.com', 'whatever');
    expect(unknown.r.status).toBe(401);
    const invalid = await request(t.base, 'POST', '/console/session', { body: { email: 'a@b.c' } });
    expect(invalid.status).toBe(400);
  });

  it('refuses a sign-in a cross-site form or page could send (login CSRF): a body not sent as JSON, a browser request from another site', async () => {
    const email = t.stack.credentials.console_email as string;
    const password = t.stack.credentials.console_password as string;
    // What an HTML form with enctype="text/plain" sends: JSON-looking text, the last duplicate key winning.
    const formBody = `{"password":"=","email":${JSON.stringify(email)},"password":${JSON.stringify(password)}}`;
    const asForm = await request(t.base, 'POST', '/console/session', { rawBody: formBody, headers: { 'content-type': 'text/plain', origin: 'http://evil.example' } });
    expect(asForm.status).toBe(400);
    expect(asForm.body.error).toMatch(/Content-Type: application\/json/);
    expect(asForm.headers.get('set-cookie')).toBeNull();
    const crossSite = await request(t.base, 'POST', '/console/session', { body: { email, password }, headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('set-cookie')).toBeNull();
    expect((await request(t.base, 'POST', '/console/session', { body: { email, password }, headers: { 'sec-fetch-site': 'same-site' } })).status).toBe(403);
    // The console's own page (same origin), and clients that are no browser.
    expect((await request(t.base, 'POST', '/console/session', { body: { email, password }, headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
    expect((await request(t.base, 'POST', '/console/session', { body: { email, password }, headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(200);
  });

  it('counts failed sign-ins by the browser address the console distribution vouches for, not by the edge server every nearby user shares', async () => {
    let n = 0;
    const via = (viewer: string, secret?: string) =>
      request(t.base, 'POST', '/console/session', {
        body: { email: `nobody-${n++}@example.com`, password: 'wrong' },
        headers: { 'x-viewer-address': viewer, ...(secret ? { 'x-origin-verify': secret } : {}) },
      });
    // One browser behind the distribution uses up its address's burst (10)...
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) statuses.push((await via('203.0.113.7', ORIGIN_SECRET)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.at(-1)).toBe(429);
    // ...while another browser at the same edge (the same source address here) is not slowed down.
    expect((await via('198.51.100.9', ORIGIN_SECRET)).status).toBe(401);
    // Without the distribution's secret (or with a wrong one) the claimed address is ignored: it
    // counts by its own source address, whose bucket is not the exhausted one.
    expect((await via('203.0.113.7')).status).toBe(401);
    expect((await via('203.0.113.7', 'guessed')).status).toBe(401);
  });

  it('slows down repeated failures for one email (429), and the right password still works for others', async () => {
    const replies: Api[] = [];
    for (let i = 0; i < 5; i++) replies.push((await signIn('locked@example.com', `guess-${i}`)).r);
    const statuses = replies.map((r) => r.status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    // Told when to try again: the email's bucket refills one failure every 30 s here.
    expect(Number(replies[4]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await demoLogin()).r.status).toBe(200);
  });

  it("counts an email's failures whatever its case: spelling it otherwise gets no more guesses", async () => {
    // From a browser address of its own (vouched for by the distribution's secret), so that only the email's bucket (3) can answer 429.
    const guess = (email: string) =>
      request(t.base, 'POST', '/console/session', {
        body: { email, password: 'wrong' },
        headers: { 'x-viewer-address': '192.0.2.44', 'x-origin-verify': ORIGIN_SECRET },
      });
    const statuses: number[] = [];
    for (const email of ['Cased@Example.com', 'cased@example.com', 'CASED@EXAMPLE.COM', 'cAsEd@eXample.com']) statuses.push((await guess(email)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('GET /console/session answers the session (and its CSRF token) or 401', async () => {
    const { cookie, csrf } = await demoLogin();
    const me = await request(t.base, 'GET', '/console/session', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ tenant: 'demo', role: 'admin', csrf_token: csrf });
    expect((await request(t.base, 'GET', '/console/session')).status).toBe(401);
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie: 'rs_console_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } })).status).toBe(401);
  });

  it('a session calls the Platform API as its tenant; writes need the CSRF token', async () => {
    const { cookie, csrf } = await demoLogin();
    const list = await request(t.base, 'GET', '/api/contexts', { headers: { cookie } });
    expect(list.status).toBe(200);
    const noToken = await request(t.base, 'POST', '/api/contexts', { headers: { cookie }, body: { name: 'home' } });
    expect(noToken.status).toBe(403);
    expect(typeof noToken.body.error).toBe('string');
    const wrongToken = await request(t.base, 'POST', '/api/contexts', { headers: { cookie, 'x-csrf-token': `${csrf.slice(0, -1)}x` }, body: { name: 'home' } });
    expect(wrongToken.status).toBe(403);
    const ok = await request(t.base, 'POST', '/api/contexts', { headers: { cookie, 'x-csrf-token': csrf }, body: { name: 'home' } });
    expect(ok.status).toBe(201);
    // Seen with the tenant's API key too: the session's tenant is the tenant.
    const viaKey = await t.demo.platform('GET', '/api/contexts');
    expect(viaKey.body.data.map((c: { id: number }) => c.id)).toContain(ok.body.id);
    // The audit trail names the console user.
    const rule = await request(t.base, 'POST', '/api/rules', { headers: { cookie, 'x-csrf-token': csrf }, body: { name: 'r', context_id: ok.body.id, conditions: [], boost: 2 } });
    expect(rule.status).toBe(201);
    const audit = await t.demo.platform('GET', `/api/audit?resource=rules/${rule.body.id}`);
    expect(audit.body.data[0].actor).toBe(`console:${t.stack.credentials.console_email}`);
  });

  it("refuses a read sent with another session's CSRF token (a tab whose session another tab replaced), never answering the current session's data", async () => {
    const table = makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1');
    await putLocalUser(dynamoConsoleUserStore(table), { email: 'admin@tenant-b.example.com', tenant: 'tenant-b', role: 'admin' }, 'tenant-b-password-1');
    // Tab A signed in as the demo admin; tab B then signed in as tenant-b's, replacing the cookie both tabs send.
    const a = await demoLogin();
    const b = await signIn('admin@tenant-b.example.com', 'tenant-b-password-1');
    expect(b.r.status).toBe(200);
    const cookie = b.cookie;
    for (const path of ['/api/contexts', '/console/api/overview?days=7', '/console/api/events?limit=5']) {
      const stale = await request(t.base, 'GET', path, { headers: { cookie, 'x-csrf-token': a.csrf } });
      expect(stale.status, path).toBe(403);
      expect(stale.body.error, path).toMatch(/X-CSRF-Token is not this session's/);
      expect(stale.body.data, path).toBeUndefined();
      // With the session's own token, or none (a client that is no console tab), the read is answered.
      expect((await request(t.base, 'GET', path, { headers: { cookie, 'x-csrf-token': b.csrf } })).status, path).toBe(200);
      expect((await request(t.base, 'GET', path, { headers: { cookie } })).status, path).toBe(200);
    }
    // The session read answers whatever token is sent: it is how the tab learns whose session it is.
    const me = await request(t.base, 'GET', '/console/session', { headers: { cookie, 'x-csrf-token': a.csrf } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: 'admin@tenant-b.example.com', tenant: 'tenant-b', csrf_token: b.csrf });
  });

  it('a viewer may only read', async () => {
    const table = makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1');
    await putLocalUser(dynamoConsoleUserStore(table), { email: 'Viewer@Example.com', tenant: 'demo', role: 'viewer' }, 'viewer-password-1');
    const { cookie, csrf, r } = await signIn('viewer@example.com', 'viewer-password-1');
    expect(r.body.role).toBe('viewer');
    expect((await request(t.base, 'GET', '/api/model-endpoints', { headers: { cookie } })).status).toBe(200);
    const write = await request(t.base, 'POST', '/api/model-endpoints', { headers: { cookie, 'x-csrf-token': csrf }, body: { endpoint_name: 'x', is_default: false } });
    expect(write.status).toBe(403);
    // A session is no Bearer request: no challenge.
    expect(write.headers.get('www-authenticate')).toBeNull();
    const keys = await request(t.base, 'POST', '/api/api-keys', { headers: { cookie, 'x-csrf-token': csrf }, body: { name: 'k', scopes: ['admin'] } });
    expect(keys.status).toBe(403);
    // The playground's search is a read: a viewer may run it.
    expect((await request(t.base, 'POST', '/console/api/search', { headers: { cookie, 'x-csrf-token': csrf }, body: { query: '' } })).status).toBe(200);
    // So is the catalog's item search, a POST only for its body; still not without the CSRF token.
    expect((await request(t.base, 'POST', '/api/items/search', { headers: { cookie, 'x-csrf-token': csrf }, body: { query: '', filters: [] } })).status).toBe(200);
    expect((await request(t.base, 'POST', '/api/items/search', { headers: { cookie }, body: { query: '', filters: [] } })).status).toBe(403);
    // An item edit is a write: admins only.
    const [item] = (await t.demo.core('POST', '/v1/items', [{ name: 'Viewer-proof lamp' }])).body.data;
    expect((await request(t.base, 'PATCH', `/console/api/items/${item.id}`, { headers: { cookie, 'x-csrf-token': csrf }, body: { active: false } })).status).toBe(403);
    expect((await t.demo.core('GET', `/v1/items/${item.id}`)).body.active).toBe(true);
  });

  it("a session follows its user: a demoted admin's next write is 403, a deleted user's or one moved to another tenant's session ends (401, cookie cleared)", async () => {
    const users = dynamoConsoleUserStore(makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1'));
    // A session's user is read again once its last check is CONSOLE_USER_CHECK_SECONDS (1) old, in whole seconds: from the next second.
    const checkDue = nextSecond;
    await putLocalUser(users, { email: 'demoted@example.com', tenant: 'demo', role: 'admin' }, 'admin-password-1');
    const { cookie, csrf } = await signIn('demoted@example.com', 'admin-password-1');
    const write = (name: string) => request(t.base, 'POST', '/api/contexts', { headers: { cookie, 'x-csrf-token': csrf }, body: { name } });
    expect((await write('before')).status).toBe(201);
    const [item] = (await t.demo.core('POST', '/v1/items', [{ name: 'Demotion lamp' }])).body.data;
    // Demoted in the user store (as an administrator would in Cognito); the session's next check takes the new role.
    await putLocalUser(users, { email: 'demoted@example.com', tenant: 'demo', role: 'viewer' }, 'admin-password-1');
    await checkDue();
    const refused = await write('after');
    expect(refused.status).toBe(403);
    expect(typeof refused.body.error).toBe('string');
    expect((await request(t.base, 'PATCH', `/console/api/items/${item.id}`, { headers: { cookie, 'x-csrf-token': csrf }, body: { active: false } })).status).toBe(403);
    // Still signed in, as a viewer: reads work, and the session says so.
    expect((await request(t.base, 'GET', '/api/contexts', { headers: { cookie } })).status).toBe(200);
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie } })).body).toMatchObject({ email: 'demoted@example.com', role: 'viewer' });
    // Deleted: the session ends at its next check, answered as an expired one, its cookie cleared.
    await users.delete('demoted@example.com');
    await checkDue();
    const gone = await request(t.base, 'GET', '/api/contexts', { headers: { cookie } });
    expect(gone.status).toBe(401);
    expect(typeof gone.body.error).toBe('string');
    expect(gone.headers.get('set-cookie')).toMatch(/^rs_console_session=;.*Max-Age=0/);
    // Ended for good: the user coming back does not revive it.
    await putLocalUser(users, { email: 'demoted@example.com', tenant: 'demo', role: 'admin' }, 'admin-password-1');
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie } })).status).toBe(401);
    expect((await request(t.base, 'POST', '/console/api/search', { headers: { cookie, 'x-csrf-token': csrf }, body: { query: '' } })).status).toBe(401);
    // Moved to another tenant: the session (of the old tenant) ends too.
    const again = await signIn('demoted@example.com', 'admin-password-1');
    expect(again.r.status).toBe(200);
    await putLocalUser(users, { email: 'demoted@example.com', tenant: 'elsewhere', role: 'admin' }, 'admin-password-1');
    await checkDue();
    const moved = await request(t.base, 'GET', '/console/session', { headers: { cookie: again.cookie } });
    expect(moved.status).toBe(401);
    expect(moved.headers.get('set-cookie')).toContain('Max-Age=0');
  });

  it("a new password ends the user's sessions at their next check; signing in again ends the browser's session before it", async () => {
    // Found by a review (2026-12-05): a session outlived its user's new password (someone who took
    // it kept it for 8 hours), and a copy of a cookie replaced by a new sign-in outlived its sign-out.
    const users = dynamoConsoleUserStore(makeTable(LOCAL_TABLE, process.env.DYNAMODB_ENDPOINT, 'us-east-1'));
    // A session's user is read again once its last check is CONSOLE_USER_CHECK_SECONDS (1) old, in whole seconds: from the next second.
    const checkDue = nextSecond;
    await putLocalUser(users, { email: 'rotated@example.com', tenant: 'demo', role: 'admin' }, 'old-password-1');
    const taken = await signIn('rotated@example.com', 'old-password-1');
    await putLocalUser(users, { email: 'rotated@example.com', tenant: 'demo', role: 'admin' }, 'new-password-2');
    await checkDue();
    const ended = await request(t.base, 'GET', '/api/contexts', { headers: { cookie: taken.cookie } });
    expect(ended.status).toBe(401);
    expect(ended.body.error).toContain('a new password');
    expect(ended.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await request(t.base, 'POST', '/api/contexts', { headers: { cookie: taken.cookie, 'x-csrf-token': taken.csrf }, body: { name: 'x' } })).status).toBe(401);
    // The new password signs in, and its session lives on past its check.
    const first = await signIn('rotated@example.com', 'new-password-2');
    expect(first.r.status).toBe(200);
    await checkDue();
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie: first.cookie } })).status).toBe(200);
    // Signing in again from that browser (its cookie sent) ends the first session.
    const second = await request(t.base, 'POST', '/console/session', { headers: { cookie: first.cookie }, body: { email: 'rotated@example.com', password: 'new-password-2' } });
    expect(second.status).toBe(200);
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie: first.cookie } })).status).toBe(401);
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie: cookieOf(second) } })).status).toBe(200);
  });

  it('an admin takes an item out of search and recommendations from the catalog page, and puts it back', async () => {
    const [item] = (await t.demo.core('POST', '/v1/items', [{ name: 'Quartzite kettle', metadata: { category: 'kitchen' } }])).body.data;
    const { cookie, csrf } = await demoLogin();
    const patch = (body: unknown, headers: Record<string, string> = { cookie, 'x-csrf-token': csrf }, id = item.id) => request(t.base, 'PATCH', `/console/api/items/${id}`, { headers, body });
    const found = async () => (await t.demo.core('POST', '/v1/search', { query: 'quartzite' })).body.data.map((h: { id: string }) => h.id);
    expect(await found()).toEqual([item.id]);
    const off = await patch({ active: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: item.id, name: 'Quartzite kettle', active: false });
    expect(await found()).toEqual([]);
    expect((await patch({ active: true, description: 'Stone grey, 1.2 l' })).body).toMatchObject({ active: true, description: 'Stone grey, 1.2 l' });
    expect(await found()).toEqual([item.id]);
    // In the Platform envelope: an unknown item, a bad body, no CSRF token, an API key.
    expect(await patch({ active: false }, undefined, '999999999')).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(await patch({ active: 'no' })).toMatchObject({ status: 400, body: { error: expect.stringContaining('active') } });
    expect((await patch({ active: false }, { cookie })).status).toBe(403);
    expect((await patch({ active: false }, { authorization: `Bearer ${t.stack.credentials.api_key}` })).status).toBe(401);
    expect((await t.demo.core('GET', `/v1/items/${item.id}`)).body.active).toBe(true);
  });

  it('console routes run Core reads for the session, never for an API key or without CSRF', async () => {
    const shoe = await t.demo.core('POST', '/v1/items', [{ name: 'Trail running shoe', metadata: { brand: 'Acme', category: 'shoes' } }]);
    const sent = Array.from({ length: 6 }, (_, i) => ({ type: 'click', user_id: `u${i}`, item_id: shoe.body.data[0].id, click: {} }));
    expect((await t.demo.core('POST', '/v1/events', sent)).status).toBe(201);
    const { cookie, csrf } = await demoLogin();
    const s = await request(t.base, 'POST', '/console/api/search', { headers: { cookie, 'x-csrf-token': csrf }, body: { query: 'running', facets: ['brand'], highlight: true, explain: true } });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ object: 'list', url: '/v1/search' });
    expect(s.body.data[0]).toMatchObject({ name: 'Trail running shoe' });
    expect(typeof s.body.data[0].score).toBe('number');
    expect(s.body.facets.brand.values[0]).toEqual({ value: 'Acme', count: 1 });
    expect(s.body.data[0].highlight.name).toContain('<em>');
    expect((await request(t.base, 'POST', '/console/api/search', { headers: { cookie }, body: { query: '' } })).status).toBe(403);
    expect((await request(t.base, 'POST', '/console/api/search', { headers: { authorization: `Bearer ${t.stack.credentials.api_key}` }, body: { query: '' } })).status).toBe(401);
    const recs = await request(t.base, 'GET', '/console/api/recommendations?user_id=u1', { headers: { cookie } });
    expect(recs.status).toBe(200);
    expect(recs.body.object).toBe('list');
    const events = await request(t.base, 'GET', '/console/api/events?limit=5', { headers: { cookie } });
    expect(events.status).toBe(200);
    // Oldest first as the Core list answers; `order=desc` the newest first, paging on to older ones.
    const ids = (b: { data: { id: string }[] }) => b.data.map((e) => Number(e.id));
    const stored: number[] = ids((await t.demo.core('GET', '/v1/events?limit=100')).body);
    expect(stored.length).toBeGreaterThan(3);
    expect(ids(events.body)).toEqual(stored.slice(0, 5));
    const newest = await request(t.base, 'GET', '/console/api/events?limit=2&order=desc', { headers: { cookie } });
    expect(newest.status).toBe(200);
    const latest = [...stored].reverse();
    expect(ids(newest.body)).toEqual(latest.slice(0, 2));
    expect(newest.body.has_more).toBe(true);
    const older = await request(t.base, 'GET', `/console/api/events?limit=2&order=desc&starting_after=${newest.body.next_cursor}`, { headers: { cookie } });
    expect(ids(older.body)).toEqual(latest.slice(2, 4));
    const bad = await request(t.base, 'GET', '/console/api/events?order=newest', { headers: { cookie } });
    expect(bad.status).toBe(400);
    const overview = await request(t.base, 'GET', '/console/api/overview?days=7', { headers: { cookie } });
    expect(overview.status).toBe(200);
    expect(overview.body.events_per_day).toHaveLength(7);
    // Every event ingested, by its UTC day: today's count grows by what is sent now.
    const today = () => request(t.base, 'GET', '/console/api/overview?days=7', { headers: { cookie } }).then((r) => r.body.events_per_day[6] as { day: string; count: number });
    const was = await today();
    expect(was.day).toBe(new Date().toISOString().slice(0, 10));
    expect(
      (
        await t.demo.core(
          'POST',
          '/v1/events',
          [1, 2, 3].map((i) => ({ type: 'view', user_id: `overview-${i}`, item_id: '1' })),
        )
      ).status,
    ).toBe(201);
    expect((await today()).count).toBe(was.count + 3);
    // Every event stored was counted.
    expect(overview.body.counted_from).toBeNull();
    // Days outside 1-90 are refused, not quietly moved into range.
    for (const days of ['0', '91', 'x']) expect((await request(t.base, 'GET', `/console/api/overview?days=${days}`, { headers: { cookie } })).status, days).toBe(400);
  });

  it('signing out ends the session at once', async () => {
    const { cookie, csrf } = await demoLogin();
    expect((await request(t.base, 'DELETE', '/console/session', { headers: { cookie } })).status).toBe(403);
    const out = await request(t.base, 'DELETE', '/console/session', { headers: { cookie, 'x-csrf-token': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await request(t.base, 'GET', '/console/session', { headers: { cookie } })).status).toBe(401);
    expect((await request(t.base, 'GET', '/api/contexts', { headers: { cookie } })).status).toBe(401);
  });

  it('an API key still works as before, and wins over a cookie', async () => {
    expect((await t.demo.platform('GET', '/api/contexts')).status).toBe(200);
    const r = await request(t.base, 'GET', '/api/contexts', { headers: { authorization: 'Bearer svc_nope', cookie: 'rs_console_session=x' } });
    expect(r.status).toBe(401);
  });
});

describe('the console web app', () => {
  it('is served at /console/ with its security headers', async () => {
    const redirect = await fetch(`${t.base}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    const page = await fetch(`${t.base}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${t.base}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${t.base}/console/..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${t.base}/console/missing.js`)).status).toBe(404);
  }, 120_000);

  it('index.html is always revalidated, however its path is spelled: only the files of assets/ are cached for good', async () => {
    // The cache header read the name as sent: index.html through assets/ was `immutable` for a year.
    for (const path of ['/console/', '/console/index.html', '/console/assets/..%2findex.html', '/console/assets%2f..%2findex.html']) {
      for (const method of ['GET', 'HEAD']) {
        const r = await fetch(`${t.base}${path}`, { method });
        expect(r.status, `${method} ${path}`).toBe(200);
        expect(r.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
        expect(r.headers.get('cache-control'), `${method} ${path}`).toBe('no-cache');
      }
    }
  }, 120_000);

  it('a file name the file system cannot look up is not found, never a 500; no dotfile is served, however its path is spelled', async () => {
    for (const path of ['/console/%00', '/console/a%00b', `/console/${'a'.repeat(300)}`, `/console/${'a/'.repeat(3000)}x`, '/console/index.html/x']) {
      for (const method of ['GET', 'HEAD']) {
        const r = await fetch(`${t.base}${path}`, { method });
        expect(r.status, `${method} ${path.slice(0, 40)}`).toBe(404);
      }
    }
    // The build's stamp (console/dist/.built-from): refused by its name, and by a name that resolves to it.
    for (const path of ['/console/.built-from', '/console/assets/..%2f.built-from', '/console/assets/..%2F.built-from']) {
      const r = await fetch(`${t.base}${path}`);
      expect(r.status, path).toBe(404);
    }
  }, 120_000);
});
