import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiFailure, api, listAll, type Context, type Segment } from '../api.ts';
import { Form } from '../table.tsx';
import { Empty, Field, Problem, Select, useAction, useLoad, useReturnFocus } from '../ui.tsx';

/** The tenant's contexts, every page of them (a picker offers them all), a picker over them and (for admins) a way to add one. */
export function useContexts() {
  const list = useLoad(() => listAll<Context>('/api/contexts'), []);
  /** A context just created is an option at once (then the list is read again). */
  const created = (c: Context) => {
    list.update((d) => (d && !d.data.some((x) => x.id === c.id) ? { ...d, data: [...d.data, c] } : d));
    list.reload();
  };
  return { ...list, created };
}

/** A parameter of the address after its page (`#/audit?resource=rules/1`), or ''. */
export const hashParam = (name: string): string => new URLSearchParams(window.location.hash.split('?')[1] ?? '').get(name) ?? '';
const contextInHash = () => hashParam('context');

/**
 * The context a page works in, kept in its address (`#/rules?context=2`): Back from a rule's
 * history, or a reload, returns to the same context instead of the first. '' until one is chosen.
 */
export function useChosenContext(): [string, (id: string) => void] {
  const [id, setId] = useState(contextInHash);
  // The address changed under the page (its link in the navigation, Back within the page): the picker follows it.
  useEffect(() => {
    const follow = () => setId(contextInHash());
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  const choose = (next: string) => {
    setId(next);
    const [path, query] = window.location.hash.split('?');
    const params = new URLSearchParams(query ?? '');
    if (next) params.set('context', next);
    else params.delete('context');
    const q = params.toString();
    // In place (no history entry of its own), and without a hashchange: the page stays.
    window.history.replaceState(window.history.state, '', `${path}${q ? `?${q}` : ''}`);
  };
  return [id, choose];
}

/** The picker of a context; `error`: the contexts could not be read (said so, not "No contexts yet"). */
export function ContextPicker({ value, onChange, allowNone, contexts, error }: { value: string; onChange: (v: string) => void; allowNone?: boolean; contexts: Context[]; error?: string | undefined }) {
  return (
    <>
      <Select
        label="Context"
        value={value}
        onChange={onChange}
        options={[
          ...(allowNone ? [{ value: '', label: 'None (no rules)' }] : contexts.length ? [] : [{ value: '', label: error ? 'Contexts not read' : 'No contexts yet' }]),
          ...contexts.map((c) => ({ value: String(c.id), label: `${c.name} (#${c.id})` })),
          // The context in use is always an option, so the picker never shows another than the one the page writes to.
          ...(value && !contexts.some((c) => String(c.id) === value) ? [{ value, label: `#${value}` }] : []),
        ]}
      />
      <Problem error={error && `The contexts could not be read: ${error}`} />
    </>
  );
}

/**
 * In place of a context's picker and what needs one while the tenant has none: where contexts are
 * made, for an admin; a viewer, who cannot make one, is told there are none (until 2026-12-06 a
 * viewer was told to create one).
 */
export function NoContexts({ admin }: { admin: boolean }) {
  return admin ? (
    <Empty>
      Create a context first (<a href="#/rules">Rules page</a>).
    </Empty>
  ) : (
    <Empty>No contexts yet: an admin creates them.</Empty>
  );
}

export function NewContext({ onCreated, disabled }: { onCreated: (c: Context) => void; disabled: boolean }) {
  const [name, setName] = useState('');
  const a = useAction();
  const submit = () =>
    a.run(async () => {
      const c = await api<Context>('POST', '/api/contexts', { name, description: '' });
      setName('');
      onCreated(c);
    });
  return (
    <Form label="New context" onSubmit={submit} submit="Add context" plain busy={a.busy} disabled={disabled} error={a.error}>
      <Field label="New context name" value={name} onChange={setName} required placeholder="home page" />
    </Form>
  );
}

export const isAdmin = (role: string): boolean => role === 'admin';

/** The tenant's segments, every page of them, to name the segment a rule or an experiment is for. */
export function useSegments() {
  return useLoad(() => listAll<Segment>('/api/segments'), []);
}

/**
 * Whom a rule or an experiment is for: everyone, or the users of its segment (by name once the
 * segments are read, else by id: a Stopped experiment may name a segment deleted since).
 */
export function audience(segmentId: number | null | undefined, segments: readonly Segment[] | undefined): string {
  if (segmentId === null || segmentId === undefined) return 'everyone';
  const s = segments?.find((x) => x.id === segmentId);
  return s ? `segment ${s.name} (#${segmentId})` : `segment #${segmentId}`;
}

/** Parses a filter value as typed: numbers, true/false, comma lists for `in`, else text; in double quotes, always text ("42"). */
export function parseValue(op: string, raw: string): unknown {
  const one = (s: string): unknown =>
    s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s === 'true' ? true : s === 'false' ? false : s !== '' && !Number.isNaN(Number(s)) ? Number(s) : s;
  // Empty parts ("a, , b", or nothing) are no values: a rule's list must hold one (the service
  // says so); the item search's empty list matches no item.
  if (op === 'in')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map(one);
  if (op === 'exists') return raw.trim() !== 'false';
  return one(raw.trim());
}

/**
 * A list's record edited in place: which one (opened by its Edit button; the form takes the
 * focus), closed by Cancel or a save that went through (the focus back to that Edit button),
 * forgotten when the record is deleted. `editing` is the record as the form opened with it, which
 * its changes are against; `now(rows)` the record as the list read since shows it (renamed
 * elsewhere meanwhile, say), which the form's title names. `save` sends the form's changed fields
 * with `send`, and nothing when none changed (an empty PATCH is 400); a refused one throws, the
 * form left open.
 */
export function useEditing<T extends { id: number }>(watch?: { path: (id: number) => string; rows: readonly T[] | undefined }) {
  const [editing, setEditing] = useState<T | undefined>();
  // The record found deleted (its read answered 404) while its form was open: the form says so at
  // once (until 2026-12-08 only its Save did, with "No rule 5.").
  const [goneId, setGoneId] = useState<number | undefined>();
  // The record's address (a new function each render: held, not a dependency).
  const path = useRef(watch?.path);
  path.current = watch?.path;
  const watched = watch !== undefined;
  const rows = watch?.rows;
  const editingId = editing?.id;
  const check = useCallback(() => {
    const of = path.current;
    if (editingId === undefined || !of) return;
    api('GET', of(editingId)).then(
      () => undefined,
      (e: unknown) => {
        if (e instanceof ApiFailure && e.status === 404) setGoneId(editingId);
      },
    );
  }, [editingId]);
  // The list read again without the record (a reload after any change on the page): is it gone, or past the rows read?
  useEffect(() => {
    if (editingId !== undefined && rows && !rows.some((r) => r.id === editingId)) check();
  }, [rows, editingId, check]);
  // Back to this tab or window (after deleting it in another, say): the record is read again.
  useEffect(() => {
    if (editingId === undefined || !watched) return;
    const visible = () => {
      if (document.visibilityState === 'visible') check();
    };
    window.addEventListener('focus', check);
    document.addEventListener('visibilitychange', visible);
    return () => {
      window.removeEventListener('focus', check);
      document.removeEventListener('visibilitychange', visible);
    };
  }, [editingId, watched, check]);
  // Each opening's own form, keyed by it: Edit pressed again on the record open starts from the record
  // as listed now, as another record's does (it kept its fields as opened, and a save, against the
  // record renamed, sent the old name back over the new one).
  const [opened, setOpened] = useState(0);
  const focus = useReturnFocus();
  const close = () => {
    setEditing(undefined);
    focus.closed();
  };
  return {
    editing,
    /** The record of the open form was deleted since it opened (elsewhere): it cannot be saved. */
    gone: editing !== undefined && goneId === editing.id,
    /** The key of the open form. */
    key: opened,
    open: (row: T) => {
      focus.opened();
      setEditing(row);
      setOpened((n) => n + 1);
    },
    close,
    now: (rows: readonly T[] | undefined): T | undefined => editing && (rows?.find((r) => r.id === editing.id) ?? editing),
    /** Closes the form of a record deleted elsewhere, reads the list again (`reload`), the focus on the page's heading (its Edit button is gone). */
    back: (reload: () => void) => {
      setEditing(undefined);
      reload();
      document.getElementById('page-title')?.focus();
    },
    /** Closed without giving the focus back (another context chosen, the record deleted). */
    forget: (id?: number) => setEditing((e) => (id === undefined || e?.id === id ? undefined : e)),
    save: async (fields: object, send: () => Promise<unknown>) => {
      if (Object.keys(fields).length) await send();
      close();
    },
  };
}

/**
 * Above an edit form whose record was renamed since it opened (in another tab, by an API key; the
 * list read again): the form's title names the record as it is now (until 2026-12-06 it kept the
 * name it opened with), and this says that its fields still show the record as it was. Said by
 * screen readers as it appears (a status).
 */
export function ChangedSince({ was, now, what = 'Renamed' }: { was: string; now: string; what?: string }) {
  return (
    <div role="status">
      {was === now ? null : (
        <p className="notice">
          {what} since this form opened: it was {was}, as the form still shows. A save sends only what is changed here.
        </p>
      )}
    </div>
  );
}

/**
 * Above an edit form whose record was deleted since it opened (in another tab, by an API key), said
 * as soon as the page learns it (the list read again without it, or the tab taking the focus back),
 * not only by a refused Save: the form's fields stay (what was typed may be copied), and "Back to
 * the list" closes it and reads the list again.
 */
export function DeletedSince({ what, onBack }: { what: string; onBack: () => void }) {
  return (
    <div className="problem" role="alert">
      <p>{what} was deleted elsewhere (in another tab, or through the API) since this form opened: it can no longer be saved.</p>
      <button type="button" onClick={onBack}>
        Back to the list
      </button>
    </div>
  );
}
