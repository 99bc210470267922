import { describe, expect, it } from 'vitest';
import type { ErasedUser } from '../../shared/domain/console-records.ts';
import { erasedFrom, eventsAfterErasure, withoutErased } from '../../shared/domain/erased-users.ts';

/*
 * What serving and training leave out of an erased user's data (docs/api.md, Erasure): while the
 * erasure runs every event of theirs; once it ended the events it erased, by id; and the history
 * of every artifact whose training read began before it ended.
 */
const ev = (id: number, created: number) => ({ id, created });
const marker = (m: Partial<ErasedUser>): ErasedUser => ({ user_id: 'u', requested_at: 1000, completed_at: null, ...m });

describe("an erased user's events as serving reads them", () => {
  it('keeps every event of a user without a marker', () => {
    const events = [ev(1, 10), ev(2, 20)];
    expect(withoutErased(undefined)(events)).toEqual(events);
  });

  it('leaves out every event while the erasure runs, even one sent after it began', () => {
    expect(withoutErased(marker({}))([ev(1, 900), ev(2, 5000)])).toEqual([]);
  });

  it('once ended, leaves out the events it erased (ids up to events_through) and keeps those sent since, even within the same second', () => {
    const m = marker({ completed_at: 2000, events_through: 10 });
    // Were the bound exclusive, event 10 (erased) would personalise again; were the creation time used, event 11 would not.
    expect(withoutErased(m)([ev(9, 1500), ev(10, 2000), ev(11, 2000), ev(12, 2500)])).toEqual([ev(11, 2000), ev(12, 2500)]);
    expect(eventsAfterErasure(m)).toBe(10);
    expect(eventsAfterErasure(marker({}))).toBe(0);
  });

  it('for an ended marker written without events_through, leaves out the events created up to its end', () => {
    expect(withoutErased(marker({ completed_at: 2000 }))([ev(1, 1999), ev(2, 2000), ev(3, 2001)])).toEqual([ev(3, 2001)]);
  });
});

describe('the users a model must not hold', () => {
  it('is every user whose erasure had not ended when the training read began; a running erasure covers any model', () => {
    const markers = [marker({ user_id: 'done', completed_at: 2000 }), marker({ user_id: 'running' })];
    expect(erasedFrom(markers, 1999)('done')).toBe(true);
    // A read that began at the erasure's end (or later) never saw the erased events.
    expect(erasedFrom(markers, 2000)('done')).toBe(false);
    expect(erasedFrom(markers, 10_000_000)('running')).toBe(true);
    expect(erasedFrom(markers, 0)('someone-else')).toBe(false);
  });
});
