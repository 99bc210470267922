import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { closeTable, makeTable } from '../../shared/data/client.ts';
import { storesFor } from '../../shared/data/index.ts';
import { createTableInput } from '../../shared/data/table-schema.ts';
import { ensureTable, startDynalite, type LocalDynamo } from '../../local/dynamo.ts';

/*
 * A data folder kept across an upgrade that added an index: the local stack rebuilds its table
 * with the index (dynalite cannot add one in place) and keeps every row.
 */
let dynamo: LocalDynamo;
let client: DynamoDBClient;
beforeAll(async () => {
  dynamo = await startDynalite();
  client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  client.destroy();
  await dynamo.close();
});

/** The table as the version before gsi4 made it. */
function withoutGsi4(name: string) {
  const input = createTableInput(name);
  return { ...input, GlobalSecondaryIndexes: input.GlobalSecondaryIndexes.filter((g) => g.IndexName !== 'gsi4') };
}

async function indexesOf(name: string): Promise<string[]> {
  const d = await client.send(new DescribeTableCommand({ TableName: name }));
  return (d.Table?.GlobalSecondaryIndexes ?? []).map((g) => String(g.IndexName)).sort();
}

async function seed(name: string) {
  const table = makeTable(name, dynamo.endpoint, 'us-east-1');
  const items = storesFor(table).items;
  const made = await items.create('m', [{ name: 'one' }, { name: 'two', description: 'text' }, { name: 'three' }], 100);
  await items.delete('m', made[2]?.id as number, 101);
  closeTable(table);
  return made.map((i) => i.id);
}

async function checkMigrated(name: string, ids: number[]) {
  expect(await indexesOf(name)).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi4']);
  const tables = (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  expect(tables.filter((t) => t.startsWith(name))).toEqual([name]);
  const table = makeTable(name, dynamo.endpoint, 'us-east-1');
  try {
    const items = storesFor(table).items;
    expect((await items.get('m', ids[1] as number))?.description).toBe('text');
    // The slim change listing (gsi4) holds the rows written before it existed.
    const listed = await items.changeKeysSince('m', 0);
    expect(listed.map((c) => [c.id, c.deleted])).toEqual([
      [ids[0], false],
      [ids[1], false],
      [ids[2], true],
    ]);
  } finally {
    closeTable(table);
  }
}

describe('the local table across an upgrade that adds an index', () => {
  it('rebuilds a table without gsi4 with it, keeping every row', async () => {
    await client.send(new CreateTableCommand(withoutGsi4('old')));
    const ids = await seed('old');
    expect(await indexesOf('old')).toEqual(['gsi1', 'gsi2', 'gsi3']);
    await ensureTable(dynamo.endpoint, 'old');
    await checkMigrated('old', ids);
    // Started again: nothing to do.
    await ensureTable(dynamo.endpoint, 'old');
    await checkMigrated('old', ids);
  });

  it('finishes a rebuild stopped after the old table was dropped (its rows only in the copy)', async () => {
    await client.send(new CreateTableCommand(createTableInput('stopped-migrating')));
    const ids = await seed('stopped-migrating');
    await ensureTable(dynamo.endpoint, 'stopped');
    await checkMigrated('stopped', ids);
  });

  it('starts a rebuild over when it stopped while the old table still stood', async () => {
    await client.send(new CreateTableCommand(withoutGsi4('half')));
    const ids = await seed('half');
    // A partial copy from the run that stopped.
    await client.send(new CreateTableCommand(createTableInput('half-migrating')));
    await ensureTable(dynamo.endpoint, 'half');
    await checkMigrated('half', ids);
  });
});
