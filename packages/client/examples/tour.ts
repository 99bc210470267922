/**
 * The README's tour with the TypeScript client. Against `npm start` (the demo tenant):
 *
 *   npx tsx packages/client/examples/tour.ts [path/to/credentials.json]
 */
import { readFileSync } from 'node:fs';
import { ApiError, CoreClient, PlatformClient } from '../src/index.ts';

const creds = JSON.parse(readFileSync(process.argv[2] ?? '.data/credentials.json', 'utf8')) as {
  base_url: string;
  client_id: string;
  client_secret: string;
  api_key: string;
};
// Tokens are fetched on first use, cached and refreshed before they expire.
const core = new CoreClient({ baseUrl: creds.base_url, clientId: creds.client_id, clientSecret: creds.client_secret });
const platform = new PlatformClient({ baseUrl: creds.base_url, apiKey: creds.api_key });

// Items: creates carry an Idempotency-Key (a random UUID unless given), so retries never duplicate.
const shoe = await core.items.create({ name: 'Trail running shoe', metadata: { category: 'running', brand: 'Acme', price: 12900 } });
const [jacket] = await core.items.createMany([{ name: 'Rain jacket', metadata: { category: 'hiking' } }, { name: 'Wool socks' }]);
await core.items.update(shoe.id, { active: false });

// Every running item, page after page (limit 100, following next_cursor as starting_after).
for await (const item of core.items.list({ category: 'running', limit: 100 })) console.log(item.id, item.name);

// Search and recommendations.
const hits = await core.search({ query: 'runing sho', limit: 5 });
console.log(
  hits.total,
  hits.data.map((h) => `${h.id} ${h.name} ${h.score.toFixed(3)}`),
);
const recs = await core.recommendations({ user_id: 'u-2', limit: 5 });
console.log(
  recs.strategy,
  recs.data.map((r) => r.item.name),
);

// Events, with a key of your own, made from what it records (a retry of the same order is stored
// once; a key is remembered 24 h, so a fixed one would make a second run of the tour a 409).
await core.events.send(
  [
    { type: 'view', user_id: 'u-42', item_id: shoe.id },
    { type: 'purchase', user_id: 'u-42', item_id: jacket?.id ?? shoe.id, purchase: { amount: 8900, currency: 'EUR' } },
  ],
  { idempotencyKey: `order-${shoe.id}` },
);

// Typed errors: status, type, code, message, param, request_id.
try {
  await core.items.get('999999999');
} catch (e) {
  if (!(e instanceof ApiError)) throw e;
  console.log(e.status, e.type, e.code, e.request_id);
}

// Train from the demo's template 1, approve the new version and serve it on "main".
if ((await platform.templates.listPage()).data.some((tpl) => tpl.id === 1)) {
  let job = await platform.trainingJobs.create({ template_id: 1, options: { algorithm: 'ease' } });
  while (!['Completed', 'Failed', 'Stopped'].includes(job.status)) {
    await new Promise((r) => setTimeout(r, 1000));
    job = await platform.trainingJobs.get(job.job_name);
  }
  const version = job.model_version;
  if (version) {
    await platform.models.approve(version);
    await platform.models.promote(version, { endpoint_name: 'main' });
  }
  console.log(job.status, version);
}

// Platform API: a context with a rule and rerank controls, then the models.
const ctx = await platform.contexts.create({ name: 'home page' });
await platform.rules.create({ name: 'no Lanternworks', context_id: ctx.id, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Lanternworks' }], boost: 0 });
await platform.rerankControls.put(ctx.id, { max_per_category: 1 });
console.log((await core.search({ query: 'light', mode: 'keyword', limit: 6, context_id: ctx.id })).data.map((h) => h.name));
console.log((await platform.models.listPage()).data.map((m) => `v${m.version} ${m.status} ${m.endpoints.join(',')}`));

await core.items.delete(shoe.id);
