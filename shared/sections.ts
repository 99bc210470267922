/*
 * The binary container of artifacts (search indexes, models): a JSON header followed by typed
 * arrays as raw little-endian bytes, each section 8-byte aligned, so loading is one JSON parse
 * plus zero-copy views.
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
  // Copy once so every section is aligned within its own buffer.
  const buf = new Uint8Array(bytes).buffer;
  const jsonLen = new DataView(buf).getUint32(0, true);
  const header = JSON.parse(Buffer.from(buf, 8, jsonLen).toString('utf8')) as H & { sections: Section[] };
  const headLen = Math.ceil((8 + jsonLen) / 8) * 8;
  return {
    header,
    get<T extends Typed>(name: string): T {
      const s = header.sections.find((x) => x.name === name);
      if (!s) throw new Error(`Artifact lacks section ${name}`);
      return new CTORS[s.type](buf, headLen + s.offset, s.length) as T;
    },
  };
}
