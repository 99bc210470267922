/*
 * The binary container of artifacts (search indexes, models): a JSON header followed by typed
 * arrays as raw little-endian bytes, each section 8-byte aligned. Loading is one JSON parse plus
 * one copy of each section into its own buffer, so no section keeps the whole artifact alive
 * (`get`, or `copying` a few MB per step); a section copied elsewhere at once (a search index's
 * vectors, into the SIMD kernel's memory) can be read in place instead (`view`).
 */
import { copyingBytes, runNow } from './concurrency.ts';

const CTORS = { Uint32Array, Uint16Array, Float32Array, Int8Array, Uint8Array } as const;
export type Typed = Uint32Array | Uint16Array | Float32Array | Int8Array | Uint8Array;
type CtorName = keyof typeof CTORS;

interface Section {
  name: string;
  type: CtorName;
  offset: number;
  length: number;
}

export function packSections(header: object, arrays: [string, Typed][]): Uint8Array {
  let offset = 0;
  const sections: Section[] = arrays.map(([name, a]) => {
    const s = { name, type: a.constructor.name as CtorName, offset, length: a.length };
    offset += Math.ceil(a.byteLength / 8) * 8;
    return s;
  });
  const json = Buffer.from(JSON.stringify({ ...header, sections }));
  const headLen = Math.ceil((8 + json.length) / 8) * 8;
  const out = new Uint8Array(headLen + offset);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 8);
  arrays.forEach(([, a], i) => out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), headLen + (sections[i] as Section).offset));
  return out;
}

export interface Sections<H> {
  header: H;
  /** The sections' names, in the artifact's order. */
  names: readonly string[];
  /** A section, copied into a buffer of its own. */
  get<T extends Typed>(name: string): T;
  /**
   * As `get`, the copy made a few MB at a time, pausing (`yield`) between (`copyingBytes`; run by
   * `runNow` or `runInTurns`): a 100,000-item index's postings are 10-16 MB a section.
   */
  copying<T extends Typed>(name: string): Generator<void, T, void>;
  /**
   * A section read in place: a view of the artifact's bytes, which it keeps alive. For a section
   * the caller copies elsewhere at once; one not aligned for its type in these bytes is copied.
   */
  view<T extends Typed>(name: string): T;
}

export function unpackSections<H>(bytes: Uint8Array): Sections<H> {
  const jsonLen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 8, jsonLen).toString('utf8')) as H & { sections: Section[] };
  const headLen = Math.ceil((8 + jsonLen) / 8) * 8;
  const locate = (name: string) => {
    const s = header.sections.find((x) => x.name === name);
    if (!s) throw new Error(`Artifact lacks section ${name}`);
    const Ctor = CTORS[s.type];
    const start = headLen + s.offset;
    const end = start + s.length * Ctor.BYTES_PER_ELEMENT;
    if (end > bytes.byteLength) throw new Error(`Artifact truncated in section ${name}`);
    return { Ctor, start, end, length: s.length };
  };
  function* copying<T extends Typed>(name: string): Generator<void, T, void> {
    const { Ctor, start, end } = locate(name);
    const out = new Uint8Array(end - start);
    yield* copyingBytes(out, bytes.subarray(start, end));
    return new Ctor(out.buffer) as T;
  }
  return {
    header,
    names: header.sections.map((s) => s.name),
    get: (name) => runNow(copying(name)),
    copying,
    view<T extends Typed>(name: string): T {
      const { Ctor, start, length } = locate(name);
      const at = bytes.byteOffset + start;
      return at % Ctor.BYTES_PER_ELEMENT === 0 ? (new Ctor(bytes.buffer as ArrayBuffer, at, length) as T) : runNow(copying<T>(name));
    },
  };
}
