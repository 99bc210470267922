import { useState, type FormEvent } from 'react';
import { api, type Context, type Page } from '../api.ts';
import { Field, Problem, Select, useAction, useLoad } from '../ui.tsx';

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
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      const c = await api<Context>('POST', '/api/contexts', { name, description: '' });
      setName('');
      onCreated(c);
    });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label="New context">
      <Field label="New context name" value={name} onChange={setName} required placeholder="home page" />
      <button type="submit" disabled={disabled || a.busy}>
        Add context
      </button>
      <Problem error={a.error} />
    </form>
  );
}

export const isAdmin = (role: string): boolean => role === 'admin';
