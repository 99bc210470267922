/**
 * The single table's physical shape, as plain data: the local stack creates it from this,
 * and the CDK data construct declares the same attributes and indexes.
 *
 * Access patterns (each entity's keys and its named indexes are declared in entities.ts and nowhere else):
 * - base table   pk/sk:      tenant, counters, items of a tenant by id, events by shard+id,
 *                             clients and API keys by their public id, idempotency records,
 *                             console records of a tenant by kind and id (event types and
 *                             endpoints together), training job logs
 * - gsi1         gsi1pk/sk:  items of a tenant by category; events of a user by id;
 *                             clients and API keys of a tenant; the list of tenants
 * - gsi2         gsi2pk/sk:  events of a tenant by type (sharded), by id; items and deletion
 *                             tombstones of a tenant by update time (the search delta)
 * - gsi3         gsi3pk/sk:  sparse: items whose embedding is behind their content (the sweep,
 *                             the pending count); training runs waiting or running, by
 *                             status then id (the maintenance sweep of runs, a list of one
 *                             of those statuses); keys only, so a count reads ids, not vectors
 * - gsi4         gsi2pk/sk:  gsi2 again, projecting only what tells one change from another
 *                             (CHANGE_FIELDS): the index status and the sweep count and list the
 *                             changes since a build here, about 150 bytes a change instead of the
 *                             whole item with its vector (a 1 MB page held a few hundred changes,
 *                             so 100,000 of them took longer than a request may). A new index on
 *                             existing attributes: DynamoDB fills it from the rows already stored.
 *                             Event rows carry gsi2's keys too, so they are in it, as their keys:
 *                             on AWS an event write updates one more index (a write unit more).
 * TTL attribute `ttl` expires idempotency records.
 */
/** What gsi4 projects beside the keys: an item change's id, state and times, a tombstone's deletion time. */
export const CHANGE_FIELDS = ['id', 'active', 'content_version', 'embedded_version', 'updated_at', 'embedding_updated_at', 'deleted_at'] as const;

export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'ALL' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'KEYS_ONLY' },
    { name: 'gsi4', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: CHANGE_FIELDS },
  ],
} as const;

export type IndexName = (typeof TABLE_SCHEMA.indexes)[number]['name'];

/** An index's Projection as CreateTable and CloudFormation write it. */
export function projectionOf(i: (typeof TABLE_SCHEMA.indexes)[number]) {
  return typeof i.projection === 'string' ? { ProjectionType: i.projection } : { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...i.projection] };
}

/** CreateTable input for local stand-ins (dynalite, DynamoDB Local). */
export function createTableInput(tableName: string) {
  const attrs = new Set<string>([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey]);
  for (const i of TABLE_SCHEMA.indexes) {
    attrs.add(i.partitionKey);
    attrs.add(i.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attrs].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TABLE_SCHEMA.indexes.map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: i.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: projectionOf(i),
    })),
  };
}
