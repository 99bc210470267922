import type { CredentialStore } from '../domain/credentials-types.ts';
import type { EventStore, ItemStore } from '../domain/types.ts';
import { table, type TableRef } from './client.ts';
import { dynamoConsoleStore, type ConsoleStore } from './console.ts';
import { dynamoCredentialStore } from './credentials.ts';
import { dynamoEventStore } from './events.ts';
import { dynamoIdempotencyStore, type IdempotencyStore } from './idempotency.ts';
import { dynamoItemStore } from './items.ts';

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

let shared: Stores | undefined;

/** The container's stores over its table, built once. */
export function stores(): Stores {
  shared ??= storesFor(table());
  return shared;
}
