import { describe, expect, it } from 'vitest';
import { parseOrThrow } from '../../shared/schemas/common.ts';
import { consoleEventsQuery, ingestEventsBody, listEventsQuery } from '../../shared/schemas/events.ts';
import { contextBody, eventTypeBody, eventTypePatch, logsQuery, modelPatch, templateBody, templatePatch, trainingJobBody, userPath } from '../../shared/schemas/console.ts';
import { experimentBody, rerankBody, ruleBody, segmentBody } from '../../shared/schemas/control.ts';
import { createItemsBody, listItemsQuery, updateItemBody } from '../../shared/schemas/items.ts';
import { platformSearchBody, platformSearchQuery, searchBody } from '../../shared/schemas/search.ts';
import { searchAnalyticsQuery, synonymBody, synonymPatch, synonymsQuery } from '../../shared/schemas/search-admin.ts';
import { ValidationError } from '../../shared/errors.ts';
import { createApiKeyBody, platformListQuery } from '../../shared/domain/credentials.ts';

function fieldErrors(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return e.details?.fieldErrors ?? {};
    throw e;
  }
  throw new Error('expected a ValidationError');
}

describe('messages of checks without their own', () => {
  it("say what to send, not zod's locale ('Too big: expected number to be <=100', 'Invalid input: expected string, received undefined')", () => {
    // Found by a black-box run (2026-12-06): the Platform item search's limit of 500 was told
    // "Too big: expected number to be <=100".
    // (Its limit now says so by name, as the GET's query parameter and Core search's body do.)
    expect(fieldErrors(() => parseOrThrow(platformSearchBody, { limit: 500, cursor: '' }, 'body'))).toEqual({ limit: ['limit must be between 1 and 100'], cursor: ['Must not be empty.'] });
    expect(fieldErrors(() => parseOrThrow(platformSearchBody, { limit: 0, query: 5 }, 'body'))).toEqual({ limit: ['limit must be between 1 and 100'], query: ['Must be a string.'] });
    expect(fieldErrors(() => parseOrThrow(platformSearchBody, { limit: 2.5 }, 'body'))).toEqual({ limit: ['limit must be an integer'] });
    expect(fieldErrors(() => parseOrThrow(trainingJobBody, {}, 'body'))).toEqual({ template_id: ['Required.'] });
    expect(fieldErrors(() => parseOrThrow(trainingJobBody, { template_id: 'x', options: { epochs: 51 } }, 'body'))).toEqual({
      template_id: ['Must be an integer.'],
      'options.epochs': ['Must be at most 50.'],
    });
    // Lengths count characters or items; a check with its own message keeps it.
    expect(fieldErrors(() => parseOrThrow(userPath, { user_id: 'u'.repeat(257) }, 'path'))).toEqual({ user_id: ['Must have at most 256 characters.'] });
    expect(fieldErrors(() => parseOrThrow(eventTypePatch, { weight: 101 }, 'body'))).toEqual({ weight: ['weight must be between 1 and 100'] });
  });

  it('a value outside a set of options is told the options, not zod\'s \'Invalid option: expected one of "asc"|"desc"\'', () => {
    // Found by a black-box review of the console's answers (2026-12-06): a search's mode, an event
    // list's order, a filter's op, a template's status and a key's scopes said zod's locale.
    expect(fieldErrors(() => parseOrThrow(consoleEventsQuery, { order: 'sideways' }, 'query'))).toEqual({ order: ['Must be one of asc or desc.'] });
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', mode: 'fuzzy' }, 'body'))).toEqual({ mode: ['Must be one of hybrid, keyword or semantic.'] });
    expect(fieldErrors(() => parseOrThrow(templatePatch, { status: 'Gone' }, 'body'))).toEqual({ status: ['Must be one of Draft or Published.'] });
    expect(fieldErrors(() => parseOrThrow(createApiKeyBody, { name: 'k', environment: 'e', scopes: ['god'] }, 'body'))).toEqual({
      'scopes.0': ['Must be one of admin, events, items or recommendations.'],
    });
    // An enum with its own message keeps it.
    expect(fieldErrors(() => parseOrThrow(synonymBody, { type: 'three_way', synonyms: ['lamp', 'light'] }, 'body'))).toEqual({ type: ['type must be two_way or one_way'] });
  });

  it('a value of the wrong kind is told its kind alone, not a length of that kind (an array field "Must have at most 50 characters.")', () => {
    // zod runs a length check on any value with a length, after the kind check failed too.
    expect(fieldErrors(() => parseOrThrow(templateBody, { name: 'n', event_types: 'x'.repeat(60) }, 'body'))).toEqual({ event_types: ['Must be an array.'] });
    expect(fieldErrors(() => parseOrThrow(templateBody, { name: 'n', event_types: '' }, 'body'))).toEqual({ event_types: ['Must be an array.'] });
    expect(fieldErrors(() => parseOrThrow(createApiKeyBody, { name: 'k', scopes: '' }, 'body'))).toEqual({ scopes: ['Must be an array.'] });
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: '', user_id: [], starting_after: Array(300).fill('a') }, 'body'))).toEqual({
      user_id: ['Must be a string.'],
      starting_after: ['Must be a string.'],
    });
    // A length check's own message on the wrong kind goes too; on the right kind it stays.
    expect(fieldErrors(() => parseOrThrow(platformSearchBody, { filters: 'x'.repeat(30) }, 'body'))).toEqual({ filters: ['Must be an array.'] });
    expect(fieldErrors(() => parseOrThrow(templateBody, { name: 'n', event_types: [] }, 'body'))).toEqual({ event_types: ['Must not be empty.'] });
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u', item_id: 1, session_id: '' }], 'body'))).toEqual({ '0.session_id': ['Must not be empty.'] });
  });
});

describe('item schemas', () => {
  it('reports array element errors with their index and unknown keys by name', () => {
    const fe = fieldErrors(() => parseOrThrow(createItemsBody, [{ name: 'a' }, { name: '', extra: 1 }], 'body'));
    expect(Object.keys(fe).sort()).toEqual(['1.extra', '1.name']);
  });

  it('refuses metadata DynamoDB cannot store, with a 400 instead of a failed write', () => {
    // Named by the property that holds it (until 2026-12-07 by `metadata` alone).
    for (const [metadata, at] of [
      [{ big: 1e16 }, 'metadata.big'],
      [{ tiny: 1e-200 }, 'metadata.tiny'],
      [{ deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) }, 'metadata.deep'],
      [{ ok: 1, nested: { a: [1, { b: 2 ** 60 }] } }, 'metadata.nested'],
      [JSON.parse('{"constructor":{}}'), 'metadata.constructor'],
    ] as const) {
      expect(Object.keys(fieldErrors(() => parseOrThrow(createItemsBody, { name: 'x', metadata }, 'body'))), JSON.stringify(metadata).slice(0, 30)).toEqual([at]);
      expect(Object.keys(fieldErrors(() => parseOrThrow(updateItemBody, { metadata }, 'body'))), JSON.stringify(metadata).slice(0, 30)).toEqual([at]);
    }
    expect(Object.keys(fieldErrors(() => parseOrThrow(createItemsBody, [{ name: 'a' }, { name: 'x', metadata: { p: 1e16, q: 1e-200 } }], 'body')))).toEqual(['1.metadata.p', '1.metadata.q']);
    // 16 KiB counts bytes.
    expect(Object.keys(fieldErrors(() => parseOrThrow(createItemsBody, { name: 'x', metadata: { s: '€'.repeat(6000) } }, 'body')))).toContain('metadata');
    expect(parseOrThrow(createItemsBody, { name: 'x', metadata: { price: 12.5, big: 9007199254740991 } }, 'body')).toMatchObject({ name: 'x' });
  });

  it('refuses caller ids and oversized metadata; metadata is otherwise any JSON object (the spec: arbitrary), its category included', () => {
    expect(Object.keys(fieldErrors(() => parseOrThrow(createItemsBody, { name: 'a', itemId: 1 }, 'body')))).toEqual(['itemId']);
    expect(fieldErrors(() => parseOrThrow(createItemsBody, { name: 'a', metadata: { blob: 'x'.repeat(20_000) } }, 'body')).metadata).toBeDefined();
    for (const category of [5, true, null, ['a', 'b'], { main: 'shoes' }, 'x'.repeat(5000)]) {
      expect(parseOrThrow(createItemsBody, { name: 'a', metadata: { category } }, 'body')).toEqual({ name: 'a', metadata: { category } });
    }
  });

  it('needs at least one update field', () => {
    expect(fieldErrors(() => parseOrThrow(updateItemBody, {}, 'body')).body).toBeDefined();
    expect(parseOrThrow(updateItemBody, { active: false }, 'body')).toEqual({ active: false });
  });

  it('parses list parameters strictly', () => {
    expect(parseOrThrow(listItemsQuery, {}, 'q')).toEqual({ limit: 20 });
    expect(parseOrThrow(listItemsQuery, { limit: '5', starting_after: '12', created_after: '1' }, 'q')).toEqual({ limit: 5, starting_after: 12, created_after: 1 });
    expect(fieldErrors(() => parseOrThrow(listItemsQuery, { limit: '1e2' }, 'q')).limit).toBeDefined();
  });
});

describe('event schemas', () => {
  const ok = { type: 'click', user_id: 'u', item_id: 7 };
  it('normalises ids to strings and keeps additional properties', () => {
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, context_id: 3, extra: [1] }], 'body')).toEqual([{ ...ok, item_id: '7', context_id: '3', extra: [1] }]);
  });

  it('refuses reserved type names, millisecond times and non-object payloads', () => {
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, type: 'user_id' }], 'body'))['0.type']).toBeDefined();
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, occurred_at: Date.now() }], 'body'))['0.occurred_at']).toBeDefined();
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, click: [] }], 'body'))['0.click']).toBeDefined();
  });

  it('reads a payload only from the event itself (a type named like an Object method has none)', () => {
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, type: 'constructor' }], 'body')).toEqual([{ ...ok, item_id: '7', type: 'constructor' }]);
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, type: 'to_string' }], 'body')).toHaveLength(1);
  });

  it('refuses what DynamoDB cannot store: numbers beyond 2^53 or below 1e-130, nesting over 32 levels', () => {
    // Named by the property that holds it (until 2026-12-07 by the event's index alone, `0`).
    for (const [extra, at] of [
      [{ n: 1e16 }, '0.n'],
      [{ n: -1e300 }, '0.n'],
      [{ n: 1e-200 }, '0.n'],
      [{ deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) }, '0.deep'],
      [{ click: { amount: 2 ** 60 } }, '0.click'],
      [{ metadata: { big: 1e16 } }, '0.metadata'],
      [JSON.parse('{"constructor":{}}'), '0.constructor'],
    ] as const) {
      expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, ...extra }], 'body'))), JSON.stringify(extra).slice(0, 40)).toEqual([at]);
    }
    // A payload is checked whatever its type is called (one ending `_at` too, which other properties' time check leaves to it).
    expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, type: 'look_at', look_at: { n: 1e16 } }], 'body')))).toEqual(['0.look_at']);
    // A field with its own check is told once, by that check (until 2026-12-07 also under `0`).
    for (const [extra, at] of [
      [{ item_id: 2 ** 60 }, '0.item_id'],
      [{ occurred_at: 1e16 }, '0.occurred_at'],
      [{ event_id: 1e16 }, '0.event_id'],
      [{ seen_at: 1e16 }, '0.seen_at'],
      [{ created: 1e16 }, '0.created'],
    ] as const) {
      expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, ...extra }], 'body'))), JSON.stringify(extra)).toEqual([at]);
    }
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, n: 9007199254740991, m: 0, f: 1.5e-100 }], 'body')).toHaveLength(1);
    // An additional property is stored inside the row's map of them: 30 levels of its own fit, 31 do not.
    const nest = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n));
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, deep: nest(30) }], 'body')).toHaveLength(1);
    expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, deep: nest(31) }], 'body')))).toEqual(['0.deep']);
  });

  it('says a number is out of range where JSON.parse could not hold it (1e400 parses as Infinity): in item metadata, an event payload or another property', () => {
    const outOfRange = ['a number is out of range: numbers must be 0 or of magnitude 1e-130 to 9007199254740991 (send larger ones as strings)'];
    expect(fieldErrors(() => parseOrThrow(createItemsBody, JSON.parse('{"name":"x","metadata":{"p":1e400}}'), 'body'))).toEqual({ 'metadata.p': outOfRange });
    expect(fieldErrors(() => parseOrThrow(createItemsBody, JSON.parse('{"name":"x","metadata":{"p":{"q":[1,-1e400]}}}'), 'body'))).toEqual({ 'metadata.p': outOfRange });
    const event = (extra: string) => JSON.parse(`[{"type":"click","user_id":"u","item_id":7,${extra}}]`);
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, event('"n":1e400'), 'body'))).toEqual({ '0.n': outOfRange });
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, event('"click":{"amount":1e999}'), 'body'))).toEqual({ '0.click': outOfRange });
  });

  it('refuses what the server sets (id, object, created), a non-object metadata and a non-integer event_id', () => {
    for (const [f, v] of [
      ['id', '5'],
      ['object', 'event'],
      ['created', 1],
      ['metadata', 'x'],
      ['metadata', [1]],
      ['event_id', 'zz'],
      ['event_id', 0],
    ] as const) {
      expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, [f]: v }], 'body'))), `${f}=${JSON.stringify(v)}`).toContain(`0.${f}`);
    }
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, event_id: 12, metadata: { campaign: 'spring' } }], 'body')).toHaveLength(1);
  });

  it("keeps the spec's time conventions in additional properties: no created_at, an *_at time in integer seconds", () => {
    for (const [f, v] of [
      ['created_at', 1_700_000_000],
      ['created_at', '2024-01-01T00:00:00Z'],
      ['updated_at', 'yesterday'],
      ['viewed_at', 1_700_000_000_000],
      ['viewed_at', 1.5],
    ] as const) {
      expect(Object.keys(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, [f]: v }], 'body'))), `${f}=${JSON.stringify(v)}`).toEqual([`0.${f}`]);
    }
    // An event type may end in _at: its payload is an object.
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, type: 'checked_at', checked_at: { desk: 3 } }], 'body')).toHaveLength(1);
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, updated_at: 1_700_000_000, viewed_at: null, format: 'hd' }], 'body')[0]).toMatchObject({
      updated_at: 1_700_000_000,
      viewed_at: null,
      format: 'hd',
    });
  });

  it('limits an event to 32 KiB in bytes, not characters', () => {
    expect(parseOrThrow(ingestEventsBody, [{ ...ok, note: 'a'.repeat(30_000) }], 'body')).toHaveLength(1);
    // 12,000 three-byte characters: 36,000 bytes, though 12,000 characters.
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ ...ok, note: '€'.repeat(12_000) }], 'body'))['0']).toBeDefined();
  });

  it('validates list parameters', () => {
    expect(parseOrThrow(listEventsQuery, { starting_after: '10', type: 'click' }, 'q')).toEqual({ limit: 20, starting_after: 10, type: 'click' });
    expect(fieldErrors(() => parseOrThrow(listEventsQuery, { starting_after: '010' }, 'q')).starting_after).toBeDefined();
  });
});

describe("a list's limit query parameter", () => {
  it('is told alike on every list (GET /api/items/search said "Must be at least 1.", search analytics "limit must be an integer from 1 to 100")', () => {
    for (const [name, schema] of [
      ['synonyms', synonymsQuery],
      ['item search', platformSearchQuery],
      ['search analytics', searchAnalyticsQuery],
    ] as const) {
      for (const [limit, message] of [
        ['abc', 'limit must be an integer'],
        ['2.5', 'limit must be an integer'],
        ['0', 'limit must be between 1 and 100'],
        ['500', 'limit must be between 1 and 100'],
      ]) {
        expect(
          fieldErrors(() => parseOrThrow(schema, { limit }, 'query')),
          `${name} ${limit}`,
        ).toEqual({ limit: [message] });
      }
    }
    expect([platformSearchQuery.parse({}).limit, searchAnalyticsQuery.parse({}).limit, platformSearchQuery.parse({ limit: '100' }).limit]).toEqual([20, 10, 100]);
  });
});

describe('a required field not sent', () => {
  it('is told it is required, not the kind it must be (a black-box audit, 2026-12-06: a context without its name was told "name must be a string")', () => {
    expect(fieldErrors(() => parseOrThrow(contextBody, {}, 'body'))).toEqual({ name: ['name is required'] });
    expect(fieldErrors(() => parseOrThrow(contextBody, { name: 5 }, 'body'))).toEqual({ name: ['name must be a string'] });
    expect(fieldErrors(() => parseOrThrow(eventTypeBody, { name: 'click' }, 'body'))).toEqual({ weight: ['weight is required'] });
    expect(fieldErrors(() => parseOrThrow(templateBody, { name: 't', event_types: [{ id: 1 }], thresholds: { per_signal_min: 1 } }, 'body'))).toEqual({
      'thresholds.total_min': ['total_min is required'],
    });
    expect(fieldErrors(() => parseOrThrow(ruleBody, { name: 'r' }, 'body'))).toEqual({
      context_id: ['context_id is required'],
      conditions: ['conditions is required'],
      boost: ['boost is required'],
    });
    expect(fieldErrors(() => parseOrThrow(ruleBody, { name: 'r', context_id: 1, boost: 2, conditions: [{ op: 'eq', value: 1 }] }, 'body'))).toEqual({
      'conditions.0.field': ['field is required'],
    });
    expect(fieldErrors(() => parseOrThrow(segmentBody, { name: 's', definition: { min_count: 1, within_days: 1 } }, 'body'))).toEqual({
      'definition.event_type': ['event_type is required'],
    });
    // A segment's definition and a condition's op too (they were told 'a definition is an object: ...' and 'op must be one of ...').
    expect(fieldErrors(() => parseOrThrow(segmentBody, { name: 's' }, 'body'))).toEqual({ definition: ['definition is required'] });
    expect(fieldErrors(() => parseOrThrow(segmentBody, { name: 's', definition: 5 }, 'body'))).toEqual({
      definition: ['a definition is an object: { event_type, min_count, within_days }, { all: [...] } or { any: [...] }'],
    });
    expect(fieldErrors(() => parseOrThrow(ruleBody, { name: 'r', context_id: 1, boost: 2, conditions: [{ field: 'category', value: 'x' }] }, 'body'))).toEqual({
      'conditions.0.op': ['op is required'],
    });
    expect(fieldErrors(() => parseOrThrow(ruleBody, { name: 'r', context_id: 1, boost: 2, conditions: [{ field: 'category', op: 'is', value: 'x' }] }, 'body'))).toEqual({
      'conditions.0.op': ['op must be one of eq, neq, in, gte, lte, exists'],
    });
    expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 1 }, 'body'))).toEqual({ variants: ['variants is required'] });
    const variants = [{ endpoint_name: 'main' }, { name: 'b', endpoint_name: 'main', traffic_percent: 50 }];
    expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 1, variants }, 'body'))).toEqual({
      'variants.0.name': ['name is required'],
      'variants.0.traffic_percent': ['traffic_percent is required'],
    });
    expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 'one', variants: 'ab' }, 'body'))).toEqual({
      context_id: ['context_id must be an integer'],
      variants: ['variants must be a list'],
    });
  });
});

describe("a model version's label and description", () => {
  it('are told by name what is wrong, as a name and a context\'s description are (zod\'s own "Must have at most 256 characters." beside "label must not hold control characters")', () => {
    expect(fieldErrors(() => parseOrThrow(modelPatch, { label: 'x'.repeat(257), description: 'x'.repeat(2001) }, 'body'))).toEqual({
      label: ['label must be at most 256 characters'],
      description: ['description must be at most 2000 characters'],
    });
    expect(fieldErrors(() => parseOrThrow(modelPatch, { label: 5, description: ['x'] }, 'body'))).toEqual({
      label: ['label must be a string, or null to clear it'],
      description: ['description must be a string, or null to clear it'],
    });
    expect(fieldErrors(() => parseOrThrow(modelPatch, { label: 'a\tb' }, 'body'))).toEqual({ label: ['label must not hold control characters (NUL, tab, line breaks, ...)'] });
    expect(parseOrThrow(modelPatch, { label: null, description: 'two\nlines' }, 'body')).toEqual({ label: null, description: 'two\nlines' });
  });
});

describe('validation messages', () => {
  // A schema's own message ("must be an integer") stands in for every check without one, so a
  // range check needs its own: the message must say what is wrong with the value sent.
  it('say once that an integer past the safe integers is out of range (z.int\'s own bound said "must be an integer" beside the range check\'s message)', () => {
    // 9007199254740993 as JSON (read as 2^53), 1e300, and 300 digits (read as about 1e300).
    for (const n of [JSON.parse('9007199254740993') as number, 1e300, Number('9'.repeat(400).slice(0, 300))]) {
      const rule = { name: 'r', context_id: n, boost: 2, conditions: [], segment_id: n, starts_at: n, ends_at: n };
      expect(
        fieldErrors(() => parseOrThrow(ruleBody, rule, 'body')),
        String(n),
      ).toEqual({
        context_id: ['context_id is out of range'],
        segment_id: ['segment_id is out of range'],
        starts_at: ['starts_at must be Unix seconds, not milliseconds'],
        ends_at: ['ends_at must be Unix seconds, not milliseconds'],
      });
      expect(
        fieldErrors(() => parseOrThrow(rerankBody, { context_id: -n, max_per_category: n }, 'body')),
        String(n),
      ).toEqual({
        context_id: ['context_id must be a positive integer'],
        max_per_category: ['max_per_category must be between 1 and 100'],
      });
      expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: n, variants: [] }, 'body')).context_id, String(n)).toEqual(['context_id is out of range']);
      expect(
        fieldErrors(() => parseOrThrow(segmentBody, { name: 's', definition: { event_type: 'buy', min_count: n, within_days: -n } }, 'body')),
        String(n),
      ).toEqual({
        'definition.min_count': ['min_count must be at most 500'],
        'definition.within_days': ['within_days must be at least 1'],
      });
      expect(fieldErrors(() => parseOrThrow(eventTypeBody, { name: 'buy', weight: n }, 'body')).weight, String(n)).toEqual(['weight must be between 1 and 100']);
      expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', limit: n }, 'body')).limit, String(n)).toEqual(['limit must be between 1 and 100']);
    }
  });

  it("say once that an integer past the safe integers is out of range in the fields ef39836e left (an experiment's attribution window, a schedule's start_at, an event's occurred_at)", () => {
    // Until the review of ef39836e these still said "must be an integer" beside their range message.
    for (const n of [JSON.parse('9007199254740993') as number, 1e300, -1e300]) {
      const big = n > 0;
      expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 1, variants: [], attribution_window_seconds: n }, 'body')).attribution_window_seconds, String(n)).toEqual([
        'attribution_window_seconds must be 60 to 2592000 (30 days)',
      ]);
      expect(fieldErrors(() => parseOrThrow(templateBody, { name: 't', schedule: { every: 'daily', start_at: n } }, 'body'))['schedule.start_at'], String(n)).toEqual([
        big ? 'start_at must be at most 4102444800 (2100-01-01)' : 'start_at must be a positive time in Unix seconds',
      ]);
      expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u', item_id: 1, occurred_at: n }], 'body'))['0.occurred_at'], String(n)).toEqual([
        big ? 'occurred_at must be in Unix seconds, not milliseconds' : 'occurred_at must not be negative',
      ]);
    }
    // Another kind of value, or a fraction, is still told as such.
    expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 1, variants: [], attribution_window_seconds: 60.5 }, 'body')).attribution_window_seconds).toEqual([
      'attribution_window_seconds must be an integer',
    ]);
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u', item_id: 1, occurred_at: 'now' }], 'body'))['0.occurred_at']).toEqual([
      'occurred_at must be an integer (Unix seconds) or null',
    ]);
  });

  it("say once that an integer past the safe integers is out of range in a training job's and a template's ids and epochs (review of ef39836e)", () => {
    // Until the review: z.int's own bound beside the range check, "Must be at least -9007199254740991." and "Must be greater than 0.".
    for (const n of [JSON.parse('9007199254740993') as number, 1e300, JSON.parse('1e400') as number]) {
      expect(
        fieldErrors(() => parseOrThrow(trainingJobBody, { template_id: n, options: { epochs: n } }, 'body')),
        String(n),
      ).toEqual({
        template_id: ['Must be at most 9007199254740991.'],
        'options.epochs': ['Must be at most 50.'],
      });
      expect(
        fieldErrors(() => parseOrThrow(trainingJobBody, { template_id: -n, options: { epochs: -n } }, 'body')),
        String(-n),
      ).toEqual({
        template_id: ['Must be greater than 0.'],
        'options.epochs': ['Must be at least 1.'],
      });
      expect(
        fieldErrors(() => parseOrThrow(templateBody, { name: 't', event_types: [{ id: -n }] }, 'body')),
        String(-n),
      ).toEqual({ 'event_types.0.id': ['Must be greater than 0.'] });
    }
    // Within range, as before.
    expect(fieldErrors(() => parseOrThrow(trainingJobBody, { template_id: 1.5, options: { epochs: 0 } }, 'body'))).toEqual({
      template_id: ['Must be an integer.'],
      'options.epochs': ['Must be at least 1.'],
    });
  });

  it('say that JSON\'s 1e400 (read as Infinity) in an integer field is out of range, as they say of 1e300, not "must be an integer"', () => {
    const inf = JSON.parse('1e400') as number;
    expect(fieldErrors(() => parseOrThrow(ruleBody, { name: 'r', context_id: inf, boost: 2, conditions: [], starts_at: -inf }, 'body'))).toEqual({
      context_id: ['context_id is out of range'],
      starts_at: ['starts_at must be Unix seconds'],
    });
    expect(fieldErrors(() => parseOrThrow(rerankBody, { context_id: 1, max_per_category: inf }, 'body')).max_per_category).toEqual(['max_per_category must be between 1 and 100']);
    expect(fieldErrors(() => parseOrThrow(experimentBody, { name: 'e', context_id: 1, variants: [], attribution_window_seconds: inf }, 'body')).attribution_window_seconds).toEqual([
      'attribution_window_seconds must be 60 to 2592000 (30 days)',
    ]);
  });

  it('say a value is out of range, not that it is missing or of another type', () => {
    expect(fieldErrors(() => parseOrThrow(createItemsBody, { name: 'a'.repeat(1001) }, 'body')).name).toEqual(['name must be at most 1000 characters']);
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', limit: 0 }, 'body')).limit).toEqual(['limit must be between 1 and 100']);
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', limit: 101 }, 'body')).limit).toEqual(['limit must be between 1 and 100']);
    // The shorthand filters' values of another kind say what they must be, not only "Invalid input".
    const filterError = (filters: object, at: string) => fieldErrors(() => parseOrThrow(searchBody, { query: 'x', filters }, 'body'))[at];
    expect(filterError({ category: 5 }, 'filters.category')).toEqual(['a string, or a list of 1 to 100 strings']);
    expect(filterError({ brand: { name: 'Acme' } }, 'filters.brand')).toEqual(['a string, or a list of 1 to 100 strings']);
    for (const value of [null, ['a'], { a: 1 }]) {
      expect(filterError({ metadata: { colour: value } }, 'filters.metadata.colour'), JSON.stringify(value)).toEqual([
        'a metadata filter value is a string, number or boolean; for a list of values or a key that is missing or null, use the [{ field, op, value }] form (op in, or exists with value false)',
      ]);
    }
    // As many shorthand metadata filters as the clause form takes clauses (they had no bound).
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(searchBody.safeParse({ query: 'x', filters: { metadata: keys(20) } }).success).toBe(true);
    expect(filterError({ metadata: keys(21) }, 'filters.metadata')).toEqual(['at most 20 metadata filters']);
    // A time of another kind is told that alone, a fraction that times are whole seconds (until
    // 2026-12-06 a string was told both).
    expect(filterError([{ field: 'created', op: 'eq', value: 'x' }], 'filters.0.value')).toEqual([
      'value is of the wrong kind for this field (active: true or false; created, updated_at: Unix seconds; name, description: a string)',
    ]);
    expect(filterError([{ field: 'updated_at', op: 'neq', value: 1.5 }], 'filters.0.value')).toEqual(['created and updated_at are whole Unix seconds: eq, neq and in take integers']);
    // A query sent, of another type, is not "required" (it was sent): the message says what it must be.
    expect(fieldErrors(() => parseOrThrow(searchBody, {}, 'body')).query).toEqual(['query is required (may be empty to browse)']);
    for (const query of [5, null, ['shoe'], { text: 'shoe' }, true]) {
      expect(fieldErrors(() => parseOrThrow(searchBody, { query }, 'body')).query, JSON.stringify(query)).toEqual(['query must be a string (may be empty to browse)']);
    }
    expect(fieldErrors(() => parseOrThrow(eventTypeBody, { name: 'click', weight: 0 }, 'body')).weight).toEqual(['weight must be between 1 and 100']);
    expect(fieldErrors(() => parseOrThrow(eventTypePatch, { weight: 101 }, 'body')).weight).toEqual(['weight must be between 1 and 100']);
    const template = (over: object) => ({ name: 't', event_types: [{ id: 1 }], thresholds: { per_signal_min: 1, total_min: 1 }, ...over });
    expect(fieldErrors(() => parseOrThrow(templateBody, template({ event_types: [{ id: 1, weight: 0.5 }] }), 'body'))['event_types.0.weight']).toEqual(['weight must be between 1 and 100']);
    expect(fieldErrors(() => parseOrThrow(templateBody, template({ thresholds: { per_signal_min: -1, total_min: 1 } }), 'body'))['thresholds.per_signal_min']).toEqual([
      'per_signal_min must not be negative',
    ]);
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u'.repeat(257), item_id: '1' }], 'body'))['0.user_id']).toEqual(['user_id must be at most 256 characters']);
    expect(fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u', item_id: '1', occurred_at: -1 }], 'body'))['0.occurred_at']).toEqual(['occurred_at must not be negative']);
    // A field sent with the wrong type is not "required".
    const event = (over: object) => fieldErrors(() => parseOrThrow(ingestEventsBody, [{ type: 'view', user_id: 'u', item_id: '1', ...over }], 'body'));
    expect(event({ user_id: 5 })['0.user_id']).toEqual(['user_id must be a string']);
    expect(event({ user_id: undefined })['0.user_id']).toEqual(['user_id is required']);
    expect(event({ item_id: 1.5 })['0.item_id']).toEqual(['item_id must be a string or a positive integer']);
    expect(event({ item_id: undefined })['0.item_id']).toEqual(['item_id is required (string or integer)']);
    expect(event({ type: 7 })['0.type']).toEqual(['type must be a string']);
    // A list too long inside a union of a value and a list (whose own error is "Invalid input").
    const inList = (n: number) => [{ field: 'metadata.x', op: 'in', value: Array.from({ length: n }, (_, i) => i) }];
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', filters: inList(1001) }, 'body'))['filters.0.value']).toEqual(['at most 1000 values']);
    expect(searchBody.safeParse({ query: 'x', filters: inList(1000) }).success).toBe(true);
    // A null or an object value says what to send instead (was "Invalid input").
    for (const value of [null, { a: 1 }, [null]]) {
      expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', filters: [{ field: 'metadata.x', op: 'eq', value }] }, 'body'))['filters.0.value'], JSON.stringify(value)).toEqual([
        'value must be a string, number or boolean, or a list of them for in; for a key that is missing or null, use op exists with value false',
      ]);
    }
    const categories = (n: number) => ({ category: Array.from({ length: n }, (_, i) => `c${i}`) });
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', filters: categories(101) }, 'body'))['filters.category']).toEqual(['at most 100 values']);
    expect(searchBody.safeParse({ query: 'x', filters: categories(100) }).success).toBe(true);
    // At most 20 facets (docs/api.md).
    const facets = (n: number) => ({ query: 'x', facets: Array.from({ length: n }, (_, i) => `k${i}`) });
    expect(fieldErrors(() => parseOrThrow(searchBody, facets(21), 'body')).facets).toEqual(['at most 20 facets']);
    expect(searchBody.safeParse(facets(20)).success).toBe(true);
  });

  it('a number JSON reads as infinite (1e400) is told it is out of range, not that it must be a number', () => {
    // A filter's 1e400 (JSON.parse reads Infinity) was told "value must be a string, number or
    // boolean, ..." and the shorthand's price "Must be a number.": a number, to its sender.
    const said = 'Must be a finite number: one beyond about 1.8e308 (such as 1e400) is out of range';
    const search = (filters: unknown) => fieldErrors(() => parseOrThrow(searchBody, { query: 'x', filters }, 'body'));
    expect(search([{ field: 'metadata.price', op: 'lt', value: Infinity }])).toEqual({ 'filters.0.value': [said] });
    expect(search([{ field: 'metadata.price', op: 'in', value: [1, -Infinity] }])).toEqual({ 'filters.0.value': [said] });
    expect(search({ metadata: { price: Infinity } })).toEqual({ 'filters.metadata.price': [said] });
    expect(search({ price: { lte: Infinity } })).toEqual({ 'filters.price.lte': [`${said}.`] });
    expect(fieldErrors(() => parseOrThrow(platformSearchBody, { filters: [{ field: 'metadata.price', op: 'eq', value: -Infinity }] }, 'body'))).toEqual({ 'filters.0.value': [said] });
    // Other values keep their messages.
    expect(search({ price: { lte: 'x' } })).toEqual({ 'filters.price.lte': ['Must be a number.'] });
  });

  it("a limit that is not a number says so in every list's query, not a pattern", () => {
    // Found by a black-box run of the console (2026-12-06): limit=abc on the training logs, the API
    // keys and the clients said "Invalid string: must match pattern /^[0-9]+$/".
    for (const q of [logsQuery, platformListQuery]) {
      expect(fieldErrors(() => parseOrThrow(q, { limit: 'abc' }, 'query'))).toEqual({ limit: ['limit must be an integer'] });
      expect(fieldErrors(() => parseOrThrow(q, { limit: '0' }, 'query')).limit?.[0]).toMatch(/^limit must be between 1 and/);
    }
    expect(parseOrThrow(logsQuery, { limit: '1000' }, 'query').limit).toBe(1000);
    expect(parseOrThrow(platformListQuery, {}, 'query').limit).toBe(100);
  });

  it('name a field whose name is empty under its own (empty) name, not under body', () => {
    expect(fieldErrors(() => parseOrThrow(listItemsQuery, { '': '5' }, 'query'))).toEqual({ '': ['Unknown field.'] });
    expect(fieldErrors(() => parseOrThrow(searchBody, { query: 'x', '': 1 }, 'body'))).toEqual({ '': ['Unknown field.'] });
    // An issue with the whole value is still the body's.
    expect(Object.keys(fieldErrors(() => parseOrThrow(searchBody, [], 'body')))).toEqual(['body']);
  });
});

describe('synonym set schemas', () => {
  // docs/api.md: a phrase is at most 100 characters and 8 words; a set has at most 20 synonyms (a one-way set's input besides them).
  const phrases = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
  const words = (n: number) => phrases(n).join(' ');

  it('takes a set of 20 phrases of 8 words and 100 characters, and no more', () => {
    expect(synonymBody.safeParse({ synonyms: phrases(20) }).success).toBe(true);
    expect(fieldErrors(() => parseOrThrow(synonymBody, { synonyms: phrases(21) }, 'body')).synonyms).toEqual(['at most 20 synonyms in a set']);
    expect(fieldErrors(() => parseOrThrow(synonymPatch, { synonyms: phrases(21) }, 'body')).synonyms).toEqual(['at most 20 synonyms in a set']);
    expect(synonymBody.safeParse({ type: 'one_way', input: words(8), synonyms: phrases(20) }).success).toBe(true);
    expect(synonymBody.safeParse({ synonyms: [words(8), 'x'] }).success).toBe(true);
    expect(fieldErrors(() => parseOrThrow(synonymBody, { synonyms: [words(9), 'x'] }, 'body'))['synonyms.0']).toEqual(['a synonym is at most 8 words']);
    expect(fieldErrors(() => parseOrThrow(synonymBody, { type: 'one_way', input: words(9), synonyms: ['x'] }, 'body')).input).toEqual(['a synonym is at most 8 words']);
    expect(synonymBody.safeParse({ synonyms: ['a'.repeat(100), 'x'] }).success).toBe(true);
    expect(fieldErrors(() => parseOrThrow(synonymBody, { synonyms: ['a'.repeat(101), 'x'] }, 'body'))['synonyms.0']).toEqual(['a synonym is at most 100 characters']);
  });

  it('refuses a synonym of stop words only, which search ignores (it was stored, and never applied)', () => {
    const stopWordsOnly = ['a synonym must hold a word search does not ignore: "the", "of" and other stop words alone never match'];
    expect(fieldErrors(() => parseOrThrow(synonymBody, { synonyms: ['tv', 'the'] }, 'body'))['synonyms.1']).toEqual(stopWordsOnly);
    expect(fieldErrors(() => parseOrThrow(synonymBody, { type: 'one_way', input: 'of the', synonyms: ['tv'] }, 'body')).input).toEqual(stopWordsOnly);
    expect(fieldErrors(() => parseOrThrow(synonymPatch, { synonyms: ['and', 'couch'] }, 'body'))['synonyms.0']).toEqual(stopWordsOnly);
    // A stop word within a phrase is fine.
    expect(synonymBody.safeParse({ synonyms: ['house of cards', 'tv'] }).success).toBe(true);
  });
});
