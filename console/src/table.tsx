import { useRef, useState, type ReactNode } from 'react';
import { BusyButton, Check, Empty, Loading, Problem } from './ui.tsx';

/** One column of a <DataTable>: its header, what each row shows in it, and the class of both (e.g. `num`). */
export interface Column<T> {
  /** The header's text; unique within its table. */
  header: string;
  /** The header is for screen readers only (an actions column). */
  srOnly?: boolean;
  cell: (row: T) => ReactNode;
  className?: string;
  /** A `data-testid` for the row's cell in this column. */
  testId?: (row: T) => string;
}

/**
 * A list shown as a table with column headers; its empty state (none without `empty`) while it has
 * no rows; the list's error above it and a "Load more" button below it when there is more. A list
 * not read yet (`loading`, no rows) says Loading…, and one that could not be read its error alone:
 * neither is said to be empty (until 2026-12-06 each page said "No segments yet." meanwhile).
 */
export function DataTable<T>(props: {
  label: string;
  columns: readonly Column<T>[];
  rows: readonly T[] | undefined;
  rowKey: (row: T) => string | number;
  rowClassName?: (row: T) => string | undefined;
  empty?: ReactNode;
  error?: string;
  /** The list is being read: without rows yet, it is not said to be empty. */
  loading?: boolean;
  /** The next page, when there is one. */
  more?: { busy: boolean; load: () => void } | null;
}) {
  const { columns, rows, more } = props;
  const table = rows?.length ? (
    <table aria-label={props.label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c.header} className={c.className}>
              {c.srOnly ? <span className="sr-only">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={props.rowKey(r)} className={props.rowClassName?.(r)}>
            {columns.map((c) => (
              <td key={c.header} className={c.className} data-testid={c.testId?.(r)}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  ) : null;
  return (
    <>
      <Problem error={props.error} />
      {/* In a box that scrolls across when the table is wider than the page, the page itself does not. */}
      {table ? <div className="table-wrap">{table}</div> : null}
      <Loading show={!table && rows === undefined && !props.error && (props.loading ?? false)} />
      {!table && !props.error && !(rows === undefined && props.loading) && props.empty !== undefined && props.empty !== null ? <Empty>{props.empty}</Empty> : null}
      {more ? (
        <BusyButton busy={more.busy} onClick={more.load}>
          Load more
        </BusyButton>
      ) : null}
    </>
  );
}

/**
 * A form that submits without leaving the page: its controls, then its submit button (primary
 * unless `plain`), then `error` when given. While `busy` (its request runs) the button is
 * aria-disabled and keeps the keyboard focus, and a submit does nothing; while `disabled` (something
 * it needs is missing: an experiment without serving endpoints) the button is disabled.
 */
export function Form(props: {
  label: string;
  onSubmit: () => unknown;
  submit: ReactNode;
  /** Its request runs: a submit meanwhile (a second Enter or click) does nothing. */
  busy?: boolean;
  /** It cannot be sent at all (not while a request runs: that is `busy`). */
  disabled?: boolean;
  /** The form's class; `inline` unless given (empty: none). */
  className?: string;
  plain?: boolean;
  /** The form is the page's search landmark. */
  search?: boolean;
  error?: string;
  children: ReactNode;
}) {
  const className = props.className ?? 'inline';
  return (
    <form
      className={className || undefined}
      role={props.search ? 'search' : undefined}
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        if (!props.busy && !props.disabled) void props.onSubmit();
      }}
    >
      {props.children}
      <BusyButton type="submit" className={props.plain ? undefined : 'primary'} disabled={props.disabled} busy={props.busy ?? false}>
        {props.submit}
      </BusyButton>
      <Problem error={props.error} />
    </form>
  );
}

/** A group of checkboxes, one per option, over a record of which are chosen; `empty` in their place without options. */
export function Checks(props: {
  legend: string;
  options: readonly { value: string; label: string }[];
  chosen: Record<string, boolean>;
  onChange: (chosen: Record<string, boolean>) => void;
  className?: string;
  empty?: ReactNode;
}) {
  const { chosen, onChange } = props;
  return (
    <fieldset className={props.className}>
      <legend>{props.legend}</legend>
      {props.options.length || props.empty === undefined ? (
        props.options.map((o) => <Check key={o.value} label={o.label} checked={chosen[o.value] ?? false} onChange={(v) => onChange({ ...chosen, [o.value]: v })} />)
      ) : (
        <Empty>{props.empty}</Empty>
      )}
    </fieldset>
  );
}

/** A row's action button; the row's name follows its visible text for screen readers ("Delete <name>"). */
/**
 * A button whose action runs once at a time: aria-disabled while its click's work (`onClick`'s promise)
 * runs, and a second click meanwhile (a double-click on Publish, Start, Revoke, Delete or Disable)
 * does nothing, instead of sending the change again and showing its refusal as an error. Other
 * buttons stay free: each button waits for its own click only.
 */
export function ActionButton({ onClick, disabled, className, label, children }: { onClick: () => unknown; disabled?: boolean; className?: string | undefined; label?: string; children: ReactNode }) {
  const running = useRef(false);
  const [busy, setBusy] = useState(false);
  const click = async () => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    try {
      await onClick();
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return (
    <BusyButton className={className} aria-label={label} disabled={disabled} busy={busy} onClick={click}>
      {children}
    </BusyButton>
  );
}

export function RowButton({ text, name, onClick, danger }: { text: string; name: string; onClick: () => unknown; danger?: boolean }) {
  return (
    <ActionButton className={danger ? 'danger' : undefined} onClick={onClick}>
      {text} <span className="sr-only">{name}</span>
    </ActionButton>
  );
}

/** An edit form's Cancel (none on a New form, which has no `onCancel`). */
export function CancelButton({ onCancel }: { onCancel?: (() => void) | undefined }) {
  return onCancel ? (
    <button type="button" onClick={onCancel}>
      Cancel
    </button>
  ) : null;
}
