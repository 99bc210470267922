import { ConsoleSession, EVENT_SHARDS, Item, Quota } from './entities.ts';

/*
 * The few keys named outside the stores, taken from the entity declarations (entities.ts, where
 * every key is declared): the quota rows' partition prefix, which the Core API functions' IAM
 * grant is limited to (lib/service-function.ts), the console sessions' (the Platform functions'), an item's key for the API bench's raw GetItem,
 * and what data-layer tests check rows by.
 */
export { EVENT_SHARDS };

export const keys = {
  item: (tenant: string, id: number) => Item.key({ tenant, id }),
  quota: (tenant: string) => Quota.key({ tenant }),
  /** Every quota row's partition key starts so: the Core API functions may write only these (IAM LeadingKeys). */
  quotaPkPrefix: Quota.indexes.primary.pkPrefix(),
  /** Every console session's partition key starts so: a Platform function records its checks of a session's user on these only (IAM LeadingKeys). */
  consoleSessionPkPrefix: ConsoleSession.indexes.primary.pkPrefix(),
};
