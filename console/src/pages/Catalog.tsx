import { useEffect, useRef, useState } from 'react';
import { ApiFailure, api, type Item, type ItemSearchResult, type SearchHit } from '../api.ts';
import { DataTable, Form, RowButton } from '../table.tsx';
import { Card, Field, Loading, PageHeader, Problem, Select, count, num, useAction, when } from '../ui.tsx';
import { isAdmin, parseValue } from './common.tsx';
import type { PageProps } from './index.tsx';

const OPS = ['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'];

export function Catalog({ session }: PageProps) {
  const [query, setQuery] = useState('');
  const [field, setField] = useState('');
  const [op, setOp] = useState('eq');
  const [value, setValue] = useState('');
  const [result, setResult] = useState<ItemSearchResult>();
  const [pages, setPages] = useState<SearchHit[]>([]);
  // The search on screen: "Load more" goes on with it, not with what the form holds since.
  const [applied, setApplied] = useState<{ query: string; filters: unknown[] }>({ query: '', filters: [] });
  const a = useAction();
  // Items an admin changed here, each with the count of changes made when it was stored: a search
  // sent before a change may answer after it with the item as it was, and its row shows the item
  // as stored instead.
  const changes = useRef({ made: 0, items: new Map<string, { at: number; item: Item }>() });
  const asStored = (rows: SearchHit[], since: number): SearchHit[] =>
    rows.map((x) => {
      const c = changes.current.items.get(x.id);
      return c && c.at > since ? { ...x, ...c.item } : x;
    });

  const run = (body: { query: string; filters: unknown[] }, cursor?: string) =>
    a.run(async () => {
      try {
        const since = changes.current.made;
        const r = await api<ItemSearchResult>('POST', '/api/items/search', { ...body, limit: 25, ...(cursor ? { cursor } : {}) });
        const rows = asStored(r.data, since);
        setApplied(body);
        setResult(r);
        setPages((p) => (cursor ? [...p, ...rows] : rows));
      } catch (e) {
        // A search that failed shows its error alone: the items of the search before are not its answer.
        // ("Load more" that failed keeps the rows of the search on screen, which they are.)
        if (!cursor) {
          setResult(undefined);
          setPages([]);
        }
        throw e;
      }
    });
  const search = () =>
    run({
      query,
      filters: field
        ? [{ field: field.includes('.') || ['id', 'name', 'description', 'active', 'created', 'updated_at'].includes(field) ? field : `metadata.${field}`, op, value: parseValue(op, value) }]
        : [],
    });
  // An admin takes an item out of recommendations and search, or puts it back; the row shows the item as stored.
  const edit = useAction();
  const setActive = (it: SearchHit, active: boolean) =>
    edit.run(async () => {
      let stored: Item;
      try {
        stored = await api<Item>('PATCH', `/console/api/items/${encodeURIComponent(it.id)}`, { active });
      } catch (e) {
        // Deleted elsewhere since it was listed (the Core API, another tab): it leaves the list beside
        // the refusal, as a rule's or a segment's row does (until 2026-12-08 it stayed listed under
        // "No item …", its button refused at every press).
        if (e instanceof ApiFailure && e.status === 404) {
          setPages((p) => p.filter((x) => x.id !== it.id));
          setResult((r) => r && { ...r, total: Math.max(0, r.total - 1) });
        }
        throw e;
      }
      changes.current.made += 1;
      changes.current.items.set(stored.id, { at: changes.current.made, item: stored });
      setPages((p) => p.map((x) => (x.id === stored.id ? { ...x, ...stored } : x)));
    });
  // First visit: list the catalog at once.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first visit lists the catalog once; later searches are the user's.
  useEffect(() => void search(), []);

  return (
    <>
      <PageHeader title="Catalog" />
      <Card>
        <Form label="Browse the catalog" search onSubmit={() => search()} submit="Search" busy={a.busy}>
          <Field label="Search items" value={query} onChange={setQuery} placeholder="empty: browse everything" />
          <Field label="Filter field" value={field} onChange={setField} placeholder="category, metadata.brand, active…" />
          <Select label="Operator" value={op} onChange={setOp} options={OPS.map((o) => ({ value: o, label: o }))} />
          <Field label="Value" value={value} onChange={setValue} placeholder='Shoes, 42, "42" (as text)' />
        </Form>
        <Problem error={a.error} />
      </Card>
      <Loading show={a.busy && !result} />
      {result ? (
        <Card title={count(result.total, 'item', 'items')}>
          <Problem error={edit.error} />
          <DataTable
            label="Items"
            rows={pages}
            rowKey={(it) => it.id}
            empty="No items match."
            more={result.has_more && result.next_cursor ? { busy: a.busy, load: () => void run(applied, result.next_cursor ?? undefined) } : null}
            columns={[
              { header: 'ID', cell: (it) => it.id },
              {
                header: 'Name',
                cell: (it) => (
                  <>
                    <strong>{it.name}</strong>
                    {it.description ? <div className="muted clamp">{it.description}</div> : null}
                  </>
                ),
              },
              { header: 'Category', cell: (it) => String(it.metadata?.category ?? '–') },
              { header: 'Brand', cell: (it) => String(it.metadata?.brand ?? '–') },
              { header: 'Price', cell: (it) => String(it.metadata?.price ?? '–') },
              { header: 'Active', cell: (it) => (it.active ? 'yes' : 'no') },
              { header: 'Updated', cell: (it) => when(it.updated_at) },
              { header: 'Score', className: 'num', cell: (it) => num(it.score) },
              ...(isAdmin(session.role)
                ? [
                    {
                      header: 'Actions',
                      cell: (it: SearchHit) =>
                        it.active ? (
                          <RowButton text="Deactivate" name={it.name} onClick={() => setActive(it, false)} danger />
                        ) : (
                          <RowButton text="Activate" name={it.name} onClick={() => setActive(it, true)} />
                        ),
                    },
                  ]
                : []),
            ]}
          />
        </Card>
      ) : null}
    </>
  );
}
