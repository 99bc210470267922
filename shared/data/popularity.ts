import * as z from 'zod/mini';
import type { PopularitySnapshot, PopularitySnapshots } from '../recs/trending.ts';
import type { TableRef } from './client.ts';
import { PopularSnapshot } from './entities.ts';
import { applied, getRow, put } from './ops.ts';

/*
 * A tenant's popularity snapshot (PopularitySnapshots of shared/recs/trending.ts) as one row:
 * `top` packs its items as bytes, each item's id (a float64: ids are safe integers) then, after
 * every id, each item's count (a uint32), both little-endian: 12 bytes an item, a 48 KB row at
 * SNAPSHOT_ITEMS (DynamoDB's item limit is 400 KB).
 */

const ENTRY_BYTES = 12;

const snapshotRow = z.object({
  counted_at: z.number(),
  events: z.int().check(z.positive()),
  top: z.instanceof(Uint8Array).check(z.refine((b) => b.byteLength % ENTRY_BYTES === 0, 'not whole entries')),
});

/** The snapshot's items as bytes. */
export function packTop(top: PopularitySnapshot['top']): Uint8Array {
  const bytes = new Uint8Array(top.length * ENTRY_BYTES);
  const view = new DataView(bytes.buffer);
  top.forEach(([id, count], i) => {
    view.setFloat64(i * 8, id, true);
    view.setUint32(top.length * 8 + i * 4, count, true);
  });
  return bytes;
}

/** The items `packTop` packed. */
export function unpackTop(bytes: Uint8Array): [number, number][] {
  const n = bytes.byteLength / ENTRY_BYTES;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: [number, number][] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = [view.getFloat64(i * 8, true), view.getUint32(n * 8 + i * 4, true)];
  return out;
}

export function dynamoPopularitySnapshots(t: TableRef): PopularitySnapshots {
  return {
    async read(tenant) {
      const row = await getRow(t, PopularSnapshot.key({ tenant }));
      if (!row) return undefined;
      const r = z.parse(snapshotRow, row);
      return { countedAt: r.counted_at, events: r.events, top: unpackTop(r.top) };
    },
    async write(tenant, s) {
      // A later count stored meanwhile (another container's) stays.
      await applied(() =>
        put(t, { ...PopularSnapshot.key({ tenant }), counted_at: s.countedAt, events: s.events, top: packTop(s.top) }, (x) => x.or(x.absent('counted_at'), x.cmp('counted_at', '<', s.countedAt))),
      );
    },
  };
}
