import type { ConsoleStore } from '../domain/console-records.ts';
import type { CredentialStore } from '../domain/credentials-types.ts';
import type { IdempotencyStore } from '../domain/idempotency.ts';
import type { EventStore, ItemStore } from '../domain/types.ts';
import { table, type TableRef } from './client.ts';
import { dynamoConsoleSessionStore, dynamoConsoleUserStore } from './console-auth.ts';
import { dynamoConsoleStore } from './console.ts';
import { dynamoCredentialStore } from './credentials.ts';
import { dynamoEventStore } from './events.ts';
import { dynamoExposureStore } from './experiments.ts';
import { dynamoIdempotencyStore } from './idempotency.ts';
import { dynamoItemStore } from './items.ts';
import { dynamoPassCursor } from './pass-cursor.ts';
import { dynamoPopularitySnapshots } from './popularity.ts';
import { dynamoSearchLogStore, dynamoSearchRecorder } from './search-analytics.ts';
import { dynamoSegmentEvents } from './segment-events.ts';
import { dynamoSynonymStore, synonymSetsOf } from './synonyms.ts';

export interface Stores {
  items: ItemStore;
  events: EventStore;
  credentials: CredentialStore;
  idempotency: IdempotencyStore;
  console: ConsoleStore;
}

export function storesFor(t: TableRef): Stores {
  return {
    items: dynamoItemStore(t),
    events: dynamoEventStore(t),
    credentials: dynamoCredentialStore(t),
    idempotency: dynamoIdempotencyStore(t),
    console: dynamoConsoleStore(t),
  };
}

/**
 * One store over the container's table, built on first use. Each is its own accessor (marked
 * pure for esbuild) so a Lambda bundle carries only the stores its handler names.
 */
function containerStore<T>(make: (t: TableRef) => T): () => T {
  let store: T | undefined;
  return () => (store ??= make(table()));
}

export const itemStore = /* @__PURE__ */ containerStore(dynamoItemStore);
export const eventStore = /* @__PURE__ */ containerStore(dynamoEventStore);
export const credentialStore = /* @__PURE__ */ containerStore(dynamoCredentialStore);
export const idempotencyStore = /* @__PURE__ */ containerStore(dynamoIdempotencyStore);
export const consoleStore = /* @__PURE__ */ containerStore(dynamoConsoleStore);
export const segmentEvents = /* @__PURE__ */ containerStore(dynamoSegmentEvents);
export const exposureStore = /* @__PURE__ */ containerStore(dynamoExposureStore);
export const searchLogStore = /* @__PURE__ */ containerStore(dynamoSearchLogStore);
export const synonymStore = /* @__PURE__ */ containerStore(dynamoSynonymStore);
/** Where the next maintenance pass starts among the tenants. */
export const passCursor = /* @__PURE__ */ containerStore(dynamoPassCursor);
/** Tenants' popularity snapshots (popularity without a model). */
export const popularitySnapshots = /* @__PURE__ */ containerStore(dynamoPopularitySnapshots);
/** Search's side of these stores: recording searches, reading synonym sets. */
export const searchRecorder = /* @__PURE__ */ containerStore(dynamoSearchRecorder);
export const synonymSets = /* @__PURE__ */ containerStore((t) => (tenant: string) => synonymSetsOf(t, tenant));
/** The console's sessions, and its users where the table holds them (locally; Cognito when deployed). */
export const consoleSessionStore = /* @__PURE__ */ containerStore(dynamoConsoleSessionStore);
export const consoleUserStore = /* @__PURE__ */ containerStore(dynamoConsoleUserStore);

/** Every store of the container (the workers use most of them). */
export function stores(): Stores {
  return { items: itemStore(), events: eventStore(), credentials: credentialStore(), idempotency: idempotencyStore(), console: consoleStore() };
}
