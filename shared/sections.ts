/*
 * The binary container of artifacts (search indexes, models): a JSON header followed by typed
 * arrays as raw little-endian bytes, each section 8-byte aligned. Loading is one JSON parse plus
 * one copy of each section into its own buffer, so no section keeps the whole artifact alive (a
 * search index moves its vectors into the SIMD kernel's memory and drops that section).
 */

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

export function unpackSections<H>(bytes: Uint8Array): { header: H; get<T extends Typed>(name: string): T } {
  const jsonLen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 8, jsonLen).toString('utf8')) as H & { sections: Section[] };
  const headLen = Math.ceil((8 + jsonLen) / 8) * 8;
  return {
    header,
    get<T extends Typed>(name: string): T {
      const s = header.sections.find((x) => x.name === name);
      if (!s) throw new Error(`Artifact lacks section ${name}`);
      const Ctor = CTORS[s.type];
      const start = headLen + s.offset;
      const end = start + s.length * Ctor.BYTES_PER_ELEMENT;
      if (end > bytes.byteLength) throw new Error(`Artifact truncated in section ${name}`);
      // Uint8Array's slice copies; a Buffer's own slice would be a view of the whole artifact.
      return new Ctor(Uint8Array.prototype.slice.call(bytes, start, end).buffer) as T;
    },
  };
}
