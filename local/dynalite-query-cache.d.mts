/** A Query's answer as the dynalite thread posts it back. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function writeBegins(table: string, indexes?: string[]): () => void;
export function tableChangeBegins(): () => void;
export function lookUp(
  method: string,
  path: string,
  headers: Record<string, string | undefined>,
  body: string,
): { answer: KeptAnswer; keep?: undefined } | { answer?: undefined; keep(status: number, headers: Record<string, string>, body: string): void } | undefined;
export function queryCacheStats(): { hits: number; misses: number; kept: number };
export function watchTables(store: unknown): void;
