import wabt from 'wabt';

/** WebAssembly text to binary (with SIMD), as `npm run build:wasm` and its drift test do it. */
export async function assembleWat(text: string): Promise<Uint8Array> {
  const w = await wabt();
  const mod = w.parseWat('module.wat', text, { simd: true });
  try {
    mod.validate();
    return mod.toBinary({}).buffer;
  } finally {
    mod.destroy();
  }
}
