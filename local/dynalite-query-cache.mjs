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
 * for a Query of an index. Every write moves the generations of the rows and of each index whose
 * entries it puts or deletes (local/dynalite-indexes.mjs) when it begins and again once it is
 * applied, and any change of a table's description or deletion of its data moves every
 * generation. A Query whose generation has not moved since an answer was kept gets that answer;
 * one that overlapped a write, or ran while one was under way, is answered by dynalite and not
 * kept. So an answer from memory is what dynalite would answer at that moment (but for its request
 * id): it never lacks a write acknowledged before it was asked, nor one a read before it saw.
 * Writes to other indexes (a search's analytics row) leave the change index's answers standing.
 */

/** Answers kept at most (the least recently used let go first), the largest kept, and the largest request kept by. */
const MAX_ENTRIES = 512;
const MAX_ANSWER_CHARS = 64 * 1024;
const MAX_REQUEST_CHARS = 8 * 1024;

/** `${table}\u0000${index}` ('' for the table's rows) -> its generation. */
const generations = new Map();
/** The same scopes -> how many writes of them are under way (begun, not yet applied). */
const underWay = new Map();
/** Moves on every change of a table's description or deletion of a table's data: all answers go. */
let epoch = 0;
/** Changes of tables under way. */
let tableChanges = 0;
/** Request body -> { what, generation, epoch, status, headers, body }. */
const answers = new Map();
let hits = 0;
let misses = 0;

const scope = (table, index) => `${table}\u0000${index ?? ''}`;
const generation = (what) => generations.get(what) ?? 0;

/**
 * A write of `table` begins: its rows (and each of `indexes`, the indexes whose entries it puts
 * or deletes) move to a new generation, and again when the function it answers is called, once
 * the write is applied. While it is under way no answer of those is kept: a read that ran
 * meanwhile may hold the write or not.
 */
export function writeBegins(table, indexes = []) {
  const scopes = [scope(table, ''), ...indexes.map((i) => scope(table, i))];
  for (const what of scopes) {
    generations.set(what, generation(what) + 1);
    underWay.set(what, (underWay.get(what) ?? 0) + 1);
  }
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    for (const what of scopes) {
      generations.set(what, generation(what) + 1);
      const n = (underWay.get(what) ?? 1) - 1;
      if (n > 0) underWay.set(what, n);
      else underWay.delete(what);
    }
  };
}

/** A table's description or data starts to change (created, changed, deleted): no kept answer holds, none is kept until the function it answers is called. */
export function tableChangeBegins() {
  epoch++;
  tableChanges++;
  answers.clear();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    epoch++;
    tableChanges--;
    answers.clear();
  };
}

/**
 * Whether dynalite would answer the request's own content, as the SDK sends it: its JSON type,
 * no browser origin (which adds a CORS header), no query string (where a presigned request's
 * parameters go), and a SigV4 header with a non-empty credential, signature and signed headers
 * (parsed as dynalite parses it) and a date. Any other request goes to dynalite.
 */
function plain(path, headers) {
  if (headers['content-type'] !== 'application/x-amz-json-1.0' || headers.origin !== undefined || path.includes('?')) return false;
  const auth = headers.authorization;
  if (typeof auth !== 'string' || auth.trim().slice(0, 5) !== 'AWS4-' || !(headers['x-amz-date'] || headers.date)) return false;
  const params = {};
  for (const x of auth.split(/,| /).slice(1).filter(Boolean)) {
    const [key, value] = x.trim().split('=');
    params[key] = value;
  }
  return Boolean(params.Credential && params.Signature && params.SignedHeaders);
}

/**
 * The kept answer to a Query request (`{ status, headers, body }`, a new request id), or, when
 * there is none, a function to call with dynalite's answer that keeps it if nothing it read was
 * written meanwhile or is being written. Undefined for any other request.
 */
export function lookUp(method, path, headers, body) {
  if (method !== 'POST' || headers['x-amz-target'] !== 'DynamoDB_20120810.Query' || !body || body.length > MAX_REQUEST_CHARS || !plain(path, headers)) return undefined;
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
      if (before.epoch !== epoch || before.generation !== generation(what) || underWay.has(what) || tableChanges > 0) return;
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
      const ended = tableChangeBegins();
      return f.call(target, ...args, (...out) => {
        ended();
        cb?.(...out);
      });
    };
  };
  for (const name of ['put', 'del', 'batch']) around(store.tableDb, name);
  for (const name of ['deleteItemDb', 'deleteIndexDb']) around(store, name);
}
