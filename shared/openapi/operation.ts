import type * as z from 'zod/mini';

/** What the route table and the handlers cannot say about an operation: its name, words, answer and examples. */
export interface OperationDoc {
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** The success answer: its status and body (null: none). */
  ok: { status: 200 | 201 | 202 | 204; schema: z.ZodMiniType | null; description: string };
  /** Error statuses besides those every operation of its API can answer. */
  errors?: readonly number[];
  /** Request body when the handler declares none (the token endpoint's form). */
  form?: z.ZodMiniType;
  examples?: { request?: unknown; response?: unknown };
  /** Headers of the success answer besides `X-Request-Id` (e.g. the console session's `Set-Cookie`), by name. */
  headers?: Readonly<Record<string, { description: string; schema: Readonly<Record<string, unknown>> }>>;
}

/** The `Cache-Control: no-store` of an answer no cache may keep (a session, a secret shown once). */
export const NO_STORE = { 'Cache-Control': { description: '`no-store`.', schema: { type: 'string', enum: ['no-store'] } } } as const;

type Ok = OperationDoc['ok'];
export const ok = (schema: z.ZodMiniType | null, description: string): Ok => ({ status: schema ? 200 : 204, schema, description });
export const created = (schema: z.ZodMiniType, description: string): Ok => ({ status: 201, schema, description });
export const accepted = (schema: z.ZodMiniType, description: string): Ok => ({ status: 202, schema, description });
export const noContent = (description: string): Ok => ({ status: 204, schema: null, description });

/** An operation: `id` its operationId, then tag and summary. */
export const op = (operationId: string, tag: string, summary: string, answer: Ok, more: Partial<Omit<OperationDoc, 'operationId' | 'tag' | 'summary' | 'ok'>> = {}): OperationDoc => ({
  operationId,
  tag,
  summary,
  ok: answer,
  ...more,
});
