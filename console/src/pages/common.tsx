import { useState } from 'react';
import { api, type Context, type Page } from '../api.ts';
import { Form } from '../table.tsx';
import { Field, Select, useAction, useLoad } from '../ui.tsx';

/** The tenant's contexts, a picker over them and (for admins) a way to add one. */
export function useContexts() {
  return useLoad(() => api<Page<Context>>('GET', '/api/contexts'), []);
}

export function ContextPicker({ value, onChange, allowNone, contexts }: { value: string; onChange: (v: string) => void; allowNone?: boolean; contexts: Context[] }) {
  return (
    <Select
      label="Context"
      value={value}
      onChange={onChange}
      options={[
        ...(allowNone ? [{ value: '', label: 'None (no rules)' }] : contexts.length ? [] : [{ value: '', label: 'No contexts yet' }]),
        ...contexts.map((c) => ({ value: String(c.id), label: `${c.name} (#${c.id})` })),
      ]}
    />
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
    <Form label="New context" onSubmit={submit} submit="Add context" plain disabled={disabled || a.busy} error={a.error}>
      <Field label="New context name" value={name} onChange={setName} required placeholder="home page" />
    </Form>
  );
}

export const isAdmin = (role: string): boolean => role === 'admin';

/** Parses a filter value as typed: numbers, true/false, comma lists for `in`, else text; in double quotes, always text ("42"). */
export function parseValue(op: string, raw: string): unknown {
  const one = (s: string): unknown =>
    s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s === 'true' ? true : s === 'false' ? false : s !== '' && !Number.isNaN(Number(s)) ? Number(s) : s;
  if (op === 'in') return raw.split(',').map((s) => one(s.trim()));
  if (op === 'exists') return raw.trim() !== 'false';
  return one(raw.trim());
}
