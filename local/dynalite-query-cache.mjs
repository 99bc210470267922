// Answers to repeated Queries kept in the dynalite thread until a write touches what they read.
import { randomBytes } from 'node:crypto';

/*
 * Every search reads the changes committed since the previous read (a Query of the change index,
 * shared/search/views.ts), and almost always finds none: at 8 concurrent searches dynalite spent
 * about 1 ms of CPU on each such empty Query (parsing its expressions with a PEG parser,
 * validating it, a LevelDB iterator and the streams around it, and their garbage), against about
 * 0.4 ms for a GetItem: on the local stack more than a third of what a search costs besides its
 * ranking. On AWS that Query costs the function a round trip and no CPU.
 *
 * So the dynalite thread keeps the answer of a Query (by its exact request body) together with
 * the generation of what it read: the table's rows for a Query of the table, one index's entries
 * for a Query of an index. Every write moves the generations of the row and of each index entry it
 * puts or deletes (local/dynalite-indexes.mjs) when it begins and again once it is applied, and
 * any change of a table's description or deletion of its data moves every generation. A Query
 * whose generation has not moved since an answer was kept gets that answer; one that overlapped a
 * write is answered but not kept. So a Query never sees less than what was acknowledged before
 * it was sent, as without the cache. Writes to other indexes (a search's analytics row) leave the
 * change index's answers standing.
 */

/** Answers kept at most (the oldest let go first), and the largest answer kept. */
const MAX_ENTRIES = 512;
const MAX_ANSWER_CHARS = 64 * 1024;

/** `${table}\u0000${index}` ('' for the table's rows) -> its generation. */
const generations = new Map();
/** Moves on every change of a table's description or deletion of a table's data: all answers go. */
let epoch = 0;
/** Request body -> { what, generation, epoch, status, headers, body }. */
const answers = new Map();
let hits = 0;
let misses = 0;

const scope = (table, index) => `${table}\u0000${index ?? ''}`;
const generation = (what) => generations.get(what) ?? 0;

/**
 * A write of `table` begins or ends: its rows (and each of `indexes`, the indexes whose entries
 * it puts or deletes) move to a new generation. Called at both ends of every write.
 */
export function written(table, indexes = []) {
  for (const what of [scope(table, ''), ...indexes.map((i) => scope(table, i))]) generations.set(what, generation(what) + 1);
}

/** A table was created, changed or deleted, or its data dropped: no kept answer holds. */
export function tablesChanged() {
  epoch++;
  answers.clear();
}

/** Whether the request carries what dynalite checks before answering (a SigV4 header and its date). */
function signed(headers) {
  const auth = headers.authorization;
  return (
    typeof auth === 'string' &&
    auth.startsWith('AWS4-') &&
    auth.includes('Credential=') &&
    auth.includes('Signature=') &&
    auth.includes('SignedHeaders=') &&
    Boolean(headers['x-amz-date'] || headers.date)
  );
}

/**
 * The kept answer to a Query request (`{ status, headers, body }`, a new request id), or, when
 * there is none, a function to call with dynalite's answer that keeps it if nothing it read was
 * written meanwhile. Undefined for any other request.
 */
export function lookUp(method, headers, body) {
  if (method !== 'POST' || headers['x-amz-target'] !== 'DynamoDB_20120810.Query' || !body || !signed(headers)) return undefined;
  const kept = answers.get(body);
  if (kept && kept.epoch === epoch && kept.generation === generation(kept.what)) {
    hits++;
    // The latest use last: the first entry is the one let go.
    answers.delete(body);
    answers.set(body, kept);
    return { answer: { status: kept.status, headers: { ...kept.headers, 'x-amzn-requestid': requestId() }, body: kept.body } };
  }
  misses++;
  let what;
  try {
    const q = JSON.parse(body);
    if (typeof q?.TableName !== 'string' || (q.IndexName !== undefined && typeof q.IndexName !== 'string')) return undefined;
    what = scope(q.TableName, q.IndexName);
  } catch {
    return undefined;
  }
  const before = { generation: generation(what), epoch };
  return {
    keep: (status, answerHeaders, answerBody) => {
      if (status !== 200 || answerBody.length > MAX_ANSWER_CHARS) return;
      if (before.epoch !== epoch || before.generation !== generation(what)) return;
      answers.delete(body);
      answers.set(body, { what, ...before, status, headers: answerHeaders, body: answerBody });
      if (answers.size > MAX_ENTRIES) answers.delete(answers.keys().next().value);
    },
  };
}

/** How many Queries were answered from memory, how many by dynalite, and how many answers are kept. */
export function queryCacheStats() {
  return { hits, misses, kept: answers.size };
}

/** A request id as dynalite makes them: 52 characters of upper-case base64. */
function requestId() {
  return randomBytes(39).toString('base64').toUpperCase().replace(/\+|\//g, '0');
}

/**
 * Moves every kept answer out when one of `store`'s tables is created, changed or deleted (its
 * description written) or a table's rows or index entries are dropped (a deleted table's).
 */
export function watchTables(store) {
  const around = (target, name) => {
    const f = target[name];
    target[name] = (...args) => {
      const cb = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
      tablesChanged();
      return f.call(target, ...args, (...out) => {
        tablesChanged();
        cb?.(...out);
      });
    };
  };
  for (const name of ['put', 'del', 'batch']) around(store.tableDb, name);
  for (const name of ['deleteItemDb', 'deleteIndexDb']) around(store, name);
}
