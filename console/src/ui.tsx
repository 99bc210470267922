import { useCallback, useEffect, useId, useRef, useState, type ButtonHTMLAttributes, type KeyboardEvent, type ReactNode } from 'react';
import { ApiFailure, type Page } from './api.ts';

/** Loads data for a page; `reload` fetches again. Errors are shown by <Problem>. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): { data: T | undefined; error: string | undefined; loading: boolean; reload: () => void; update: (fn: (d: T | undefined) => T | undefined) => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  // What the data on screen was loaded for: a reload keeps it while it runs, another thing asked for does not.
  const loadedFor = useRef<readonly unknown[]>(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what the load depends on (`deps`); `tick` is how `reload` asks again.
  useEffect(() => {
    let live = true;
    setLoading(true);
    if (deps.length !== loadedFor.current.length || deps.some((d, k) => !Object.is(d, loadedFor.current[k]))) {
      loadedFor.current = deps;
      setData(undefined);
    }
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (!live) return;
        // Rows of what was asked before must not stand under what failed now.
        setData(undefined);
        setError(e instanceof Error ? e.message : String(e));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, update: setData };
}

/**
 * A list read a page at a time (`read(after)`: the page after that cursor, or undefined for none),
 * with "Load more" for the next (`more`, for <DataTable>). A reload reads as many rows as are
 * shown again, so a row loaded with "Load more" stays on screen after a change; other `deps` read
 * the first page only.
 */
export function usePages<T>(
  read: (after: string | undefined) => Promise<Page<T> | undefined>,
  deps: readonly unknown[],
): { rows: T[] | undefined; error: string | undefined; loading: boolean; reload: () => void; more: { busy: boolean; load: () => void } | null } {
  const keep = useRef(0);
  const list = useLoad(async () => {
    const want = keep.current;
    keep.current = 0;
    const rows: T[] = [];
    let cursor: string | null = null;
    do {
      const page: Page<T> | undefined = await read(cursor ?? undefined);
      if (!page) return undefined;
      rows.push(...page.data);
      cursor = page.has_more ? page.next_cursor : null;
    } while (cursor && rows.length < want);
    return { rows, cursor };
  }, deps);
  const next = useAction();
  // The list a "Load more" followed: its error is of that list, not of one read since (a reload
  // or other deps), which until 2026-12-06 still showed it beside fresh rows.
  const followed = useRef<unknown>(undefined);
  const cursor = list.data?.cursor ?? null;
  const loadMore = (after: string) =>
    next.run(async () => {
      followed.current = list.data;
      const page = await read(after);
      if (!page) return;
      // Appended only to the list it follows (not to another one asked for meanwhile).
      list.update((d) => (d && d.cursor === after ? { rows: [...d.rows, ...page.data], cursor: page.has_more ? page.next_cursor : null } : d));
    });
  return {
    rows: list.data?.rows,
    error: list.error ?? (followed.current === list.data ? next.error : undefined),
    loading: list.loading,
    reload: () => {
      keep.current = list.data?.rows.length ?? 0;
      list.reload();
    },
    more: cursor ? { busy: next.busy || list.loading, load: () => void loadMore(cursor) } : null,
  };
}

/** Runs `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => saved.current(), ms);
    return () => clearInterval(t);
  }, [ms, active]);
}

/** An action's state: busy while it runs, its error shown next to it (a button that must not run twice at once is an <ActionButton>). */
export function useAction(): { busy: boolean; error: string | undefined; run: (fn: () => Promise<unknown>) => Promise<void>; fail: (message: string) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e instanceof ApiFailure || e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }, []);
  /** Shows a problem found before anything was sent. */
  const fail = useCallback((message: string) => setError(message), []);
  return { busy, error, run, fail };
}

/** What a change of a row answers when the row changed elsewhere: gone (404), changed (409), or in another state (400). */
const STALE_ROW = new Set([400, 404, 409]);

/**
 * Sends a change of a listed row and then reads the list again (`reload`); also when the change is
 * refused because the row changed elsewhere (deleted or changed in another tab, by an API key), so
 * the list shows the row as it is now beside the refusal, not as it was (until 2026-12-06 a row
 * deleted elsewhere stayed listed under "No segment 3."). Not after a 401: the tab signs in anew.
 */
export async function thenReload<T>(change: Promise<T>, reload: () => void): Promise<T> {
  try {
    const answer = await change;
    reload();
    return answer;
  } catch (e) {
    if (e instanceof ApiFailure && STALE_ROW.has(e.status)) reload();
    throw e;
  }
}

/**
 * The keyboard focus given back to what opened a form (its Edit button) when the form closes:
 * `opened` as it opens (the control focused then), `closed` as it closes, once it is gone. Without
 * it the focus, on the form's Cancel or Save button, fell to the page's start with the form.
 */
export function useReturnFocus(): { opened: () => void; closed: () => void } {
  const opener = useRef<HTMLElement | null>(null);
  const [back, setBack] = useState(0);
  useEffect(() => {
    if (back && opener.current?.isConnected) opener.current.focus();
  }, [back]);
  const opened = useCallback(() => {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  }, []);
  const closed = useCallback(() => setBack((n) => n + 1), []);
  return { opened, closed };
}

/**
 * A request whose answer is shown until the next one: `data` is the last answer, and a failure
 * clears it, as `useLoad` does, so an earlier answer never stands under a later error.
 */
export function useResult<T>(): { data: T | undefined; busy: boolean; error: string | undefined; run: (fn: () => Promise<T>) => Promise<void> } {
  const [data, setData] = useState<T>();
  const a = useAction();
  const { run: runAction } = a;
  const run = useCallback(
    (fn: () => Promise<T>) =>
      runAction(async () => {
        try {
          setData(await fn());
        } catch (e) {
          setData(undefined);
          throw e;
        }
      }),
    [runAction],
  );
  return { data, busy: a.busy, error: a.error, run };
}

/**
 * A button that does nothing while `busy` (its request runs): aria-disabled, not disabled, so it
 * keeps the keyboard focus (a disabled button drops it to the page's start), and aria-busy marks
 * it busy. A submit button (`type="submit"`, no `onClick`) leaves the check to its form's submit.
 */
export function BusyButton({ busy, onClick, ...button }: { busy: boolean; onClick?: () => unknown } & Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'onClick' | 'aria-disabled' | 'aria-busy'>) {
  return <button type="button" {...button} aria-disabled={busy || undefined} aria-busy={busy || undefined} onClick={onClick && (() => void (busy || onClick()))} />;
}

export function Problem({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p className="problem" role="alert">
      {error}
    </p>
  );
}

export function Loading({ show }: { show: boolean }) {
  return show ? (
    <p className="muted" role="status">
      Loading…
    </p>
  ) : null;
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1 tabIndex={-1} id="page-title">
        {title}
      </h1>
      {children ? <div className="actions">{children}</div> : null}
    </header>
  );
}

export function Card({ title, children, className }: { title?: string; children: ReactNode; className?: string }) {
  return (
    <section className={`card ${className ?? ''}`} aria-label={title}>
      {title ? <h2>{title}</h2> : null}
      {children}
    </section>
  );
}

/**
 * A tablist, as the WAI-ARIA tabs pattern has it: the chosen tab alone is in the page's Tab order
 * (tabIndex 0, the others -1); ArrowLeft and ArrowRight choose the tab before or after it (round
 * from the last to the first), Home and End the first and the last, and the tab chosen takes the focus.
 * The chosen tab controls its panel, a `TabPanel` given the same `id` (only the chosen one is shown,
 * so the other tabs name no panel).
 */
export function Tabs<T extends string>({ id, label, tabs, value, onChange }: { id: string; label: string; tabs: { value: T; label: string }[]; value: T; onChange: (v: T) => void }) {
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = tabs.findIndex((t) => t.value === value);
    const to = ({ ArrowLeft: at - 1 + tabs.length, ArrowRight: at + 1, Home: 0, End: tabs.length - 1 } as Partial<Record<string, number>>)[e.key];
    const tab = to === undefined ? undefined : tabs[to % tabs.length];
    if (!tab) return;
    e.preventDefault();
    onChange(tab.value);
    e.currentTarget.querySelectorAll<HTMLButtonElement>('[role="tab"]')[tabs.indexOf(tab)]?.focus();
  };
  return (
    <div role="tablist" aria-label={label} className="tabs" onKeyDown={onKeyDown}>
      {tabs.map((t) => (
        <button
          key={t.value}
          type="button"
          role="tab"
          id={tabId(id, t.value)}
          aria-selected={t.value === value}
          aria-controls={t.value === value ? panelId(id, t.value) : undefined}
          tabIndex={t.value === value ? 0 : -1}
          onClick={() => onChange(t.value)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

const tabId = (id: string, value: string) => `${id}-tab-${value}`;
const panelId = (id: string, value: string) => `${id}-panel-${value}`;

/** The chosen tab's panel of the `Tabs` with the same `id`, named by that tab. */
export function TabPanel({ id, value, children }: { id: string; value: string; children: ReactNode }) {
  return (
    <div role="tabpanel" id={panelId(id, value)} aria-labelledby={tabId(id, value)}>
      {children}
    </div>
  );
}

/** A labelled input (every control of the console has a visible label). */
export function Field(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  type?: string;
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
  min?: number;
  max?: number;
  step?: string;
  hint?: string;
  /** Shown, not editable (a viewer's read of what only an admin changes). */
  disabled?: boolean;
  /** Values offered as the user types (a datalist); any other value may still be typed. */
  suggestions?: readonly string[];
  /** Takes the keyboard focus when shown (an edit form's first field, opened by its Edit button). */
  focusOnMount?: boolean;
}) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const { focusOnMount } = props;
  useEffect(() => {
    if (focusOnMount) input.current?.focus();
  }, [focusOnMount]);
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        ref={input}
        id={id}
        list={props.suggestions ? `${id}-suggestions` : undefined}
        type={props.type ?? 'text'}
        value={props.value}
        required={props.required}
        placeholder={props.placeholder}
        autoComplete={props.autoComplete ?? 'off'}
        min={props.min}
        max={props.max}
        step={props.step}
        disabled={props.disabled}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
      {props.suggestions ? (
        <datalist id={`${id}-suggestions`}>
          {props.suggestions.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      ) : null}
      {props.hint ? (
        <small id={`${id}-hint`} className="muted">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
}

export function Select(props: { label: string; value: string; onChange: (v: string) => void; options: { value: string; label: string }[]; required?: boolean }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} value={props.value} required={props.required} onChange={(e) => props.onChange(e.target.value)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Check({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/**
 * A time (Unix seconds) as the browser's locale says it, with its zone ("1/2/2030, 3:04:00 AM
 * UTC": a time shown without one was read in another zone by a colleague elsewhere); '–' for none.
 * 0 is a time (the first second of 1970: an event's occurred_at, a rule's starts_at may be 0), not none.
 */
export const when = (s: number | null | undefined): string => (s === null || s === undefined ? '–' : new Date(s * 1000).toLocaleString(undefined, { timeZoneName: 'short' }));
/** A count with its noun, singular for 1: "1 match", "3 matches". */
export const count = (n: number, one: string, many: string): string => `${n.toLocaleString()} ${n === 1 ? one : many}`;
export const num = (x: number | null | undefined, digits = 4): string => (x === null || x === undefined ? '–' : Number.isInteger(x) ? String(x) : x.toFixed(digits));

/** A list's empty state. */
export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted empty">{children}</p>;
}

/** A secret shown once, with a copy button, until dismissed. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section className="shown-once" aria-label={label}>
      <p>
        <strong>{label}</strong>: copy it now. It is shown only once and cannot be retrieved later.
      </p>
      <code className="secret" data-testid="secret-once">
        {value}
      </code>
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </section>
  );
}
