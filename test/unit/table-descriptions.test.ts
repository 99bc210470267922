import { describe, expect, it } from 'vitest';
import { cacheTableDescriptions, type TableDb } from '../../local/table-descriptions.mjs';

/** A table store whose reads answer only when released, as LevelDB answers after a while. */
function slowStore() {
  const data = new Map<string, unknown>();
  const pending: (() => void)[] = [];
  let reads = 0;
  const db: TableDb = {
    get(name, callback) {
      reads++;
      const value = data.get(name); // read now, answered later
      pending.push(() => callback(null, value));
    },
    put(name, value, callback) {
      data.set(name, value);
      setImmediate(() => callback?.(null));
    },
    del(name, callback) {
      data.delete(name);
      setImmediate(() => callback?.(null));
    },
    batch(operations, callback) {
      for (const op of operations)
        if (op.type === 'del') data.delete(op.key);
        else data.set(op.key, op.value);
      setImmediate(() => callback?.(null));
    },
  };
  return { db, data, release: () => pending.splice(0).forEach((f) => f()), reads: () => reads };
}

const get = (db: TableDb, name: string) => new Promise<unknown>((resolve, reject) => db.get(name, (err, v) => (err ? reject(err) : resolve(v))));
const put = (db: TableDb, name: string, value: unknown) => new Promise<void>((resolve) => db.put(name, value, () => resolve()));

describe('table descriptions kept in memory', () => {
  it('answers later reads from memory until the table is written', async () => {
    const s = slowStore();
    const db = cacheTableDescriptions(s.db);
    s.data.set('t', { TableStatus: 'ACTIVE' });
    const first = get(db, 't');
    s.release();
    expect(await first).toEqual({ TableStatus: 'ACTIVE' });
    expect(await get(db, 't')).toEqual({ TableStatus: 'ACTIVE' });
    expect(s.reads()).toBe(1);
    await put(db, 't', { TableStatus: 'UPDATING' });
    const third = get(db, 't');
    s.release();
    expect(await third).toEqual({ TableStatus: 'UPDATING' });
    expect(s.reads()).toBe(2);
  });

  it('does not keep a read that overlapped a write of the same table', async () => {
    const s = slowStore();
    const db = cacheTableDescriptions(s.db);
    s.data.set('t', { TableStatus: 'CREATING' });
    // A read of CREATING is under way when ACTIVE is written (dynalite's createTableMs timer).
    const during = get(db, 't');
    await put(db, 't', { TableStatus: 'ACTIVE' });
    s.release();
    expect(await during).toEqual({ TableStatus: 'CREATING' });
    const after = get(db, 't');
    s.release();
    expect(await after).toEqual({ TableStatus: 'ACTIVE' });
    // A read that overlapped a deletion is not kept either.
    const overlapping = get(db, 't');
    const deleted = new Promise<void>((resolve) => db.del('t', () => resolve()));
    s.release();
    await overlapping;
    await deleted;
    const gone = get(db, 't');
    s.release();
    expect(await gone).toBeUndefined();
  });
});
