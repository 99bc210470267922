import { useEffect, useState, type FormEvent } from 'react';
import { api, type Item } from '../api.ts';
import { Card, Empty, Field, Loading, PageHeader, Problem, Select, num, useAction, when } from '../ui.tsx';
import type { PageProps } from './index.tsx';

interface Result {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
  total: number;
}

const OPS = ['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'];

/** Parses a filter value as typed: numbers, true/false, comma lists for `in`, else text. */
function parseValue(op: string, raw: string): unknown {
  const one = (s: string): unknown => (s === 'true' ? true : s === 'false' ? false : s !== '' && !Number.isNaN(Number(s)) ? Number(s) : s);
  if (op === 'in') return raw.split(',').map((s) => one(s.trim()));
  if (op === 'exists') return raw !== 'false';
  return one(raw.trim());
}

export function Catalog(_: PageProps) {
  const [query, setQuery] = useState('');
  const [field, setField] = useState('');
  const [op, setOp] = useState('eq');
  const [value, setValue] = useState('');
  const [result, setResult] = useState<Result>();
  const [pages, setPages] = useState<Item[]>([]);
  const a = useAction();

  const search = (cursor?: string) =>
    a.run(async () => {
      const filters = field
        ? [{ field: field.includes('.') || ['id', 'name', 'description', 'active', 'created', 'updated_at'].includes(field) ? field : `metadata.${field}`, op, value: parseValue(op, value) }]
        : [];
      const r = await api<Result>('POST', '/api/items/search', { query, filters, limit: 25, ...(cursor ? { cursor } : {}) });
      setResult(r);
      setPages((p) => (cursor ? [...p, ...r.data] : r.data));
    });
  // First visit: list the catalog at once.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first visit lists the catalog once; later searches are the user's.
  useEffect(() => void search(), []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void search();
  };

  return (
    <>
      <PageHeader title="Catalog" />
      <Card>
        {/* biome-ignore lint/a11y/useSemanticElements: a form with role=search is the search landmark itself; <search> would only wrap it. */}
        <form className="inline" onSubmit={submit} role="search" aria-label="Browse the catalog">
          <Field label="Search items" value={query} onChange={setQuery} placeholder="empty: browse everything" />
          <Field label="Filter field" value={field} onChange={setField} placeholder="category, metadata.brand, active…" />
          <Select label="Operator" value={op} onChange={setOp} options={OPS.map((o) => ({ value: o, label: o }))} />
          <Field label="Value" value={value} onChange={setValue} placeholder="Shoes" />
          <button type="submit" className="primary" disabled={a.busy}>
            Search
          </button>
        </form>
        <Problem error={a.error} />
      </Card>
      <Loading show={a.busy && !result} />
      {result ? (
        <Card title={`${result.total.toLocaleString()} items`}>
          {pages.length === 0 ? (
            <Empty>No items match.</Empty>
          ) : (
            <div className="table-wrap">
              <table aria-label="Items">
                <thead>
                  <tr>
                    <th scope="col">ID</th>
                    <th scope="col">Name</th>
                    <th scope="col">Category</th>
                    <th scope="col">Brand</th>
                    <th scope="col">Price</th>
                    <th scope="col">Active</th>
                    <th scope="col">Updated</th>
                    <th scope="col" className="num">
                      Score
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {pages.map((it) => (
                    <tr key={it.id}>
                      <td>{it.id}</td>
                      <td>
                        <strong>{it.name}</strong>
                        {it.description ? <div className="muted clamp">{it.description}</div> : null}
                      </td>
                      <td>{String(it.metadata?.category ?? '–')}</td>
                      <td>{String(it.metadata?.brand ?? '–')}</td>
                      <td>{it.metadata?.price !== undefined ? String(it.metadata.price) : '–'}</td>
                      <td>{it.active ? 'yes' : 'no'}</td>
                      <td>{when(it.updated_at)}</td>
                      <td className="num">{num(it.score)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {result.has_more && result.next_cursor ? (
            <button type="button" disabled={a.busy} onClick={() => void search(result.next_cursor ?? undefined)}>
              Load more
            </button>
          ) : null}
        </Card>
      ) : null}
    </>
  );
}
