import { readFileSync } from 'node:fs';
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

/**
 * The WebAssembly kernels: each one's source, the module `npm run build:wasm` writes its bytes
 * to (so handlers bundle them without a separate asset), and the constant holding them there.
 */
export const WASM_KERNELS = [
  { src: 'shared/search/int8-dot.wat', out: 'shared/search/int8-dot.ts', name: 'INT8_DOT_WASM' },
  { src: 'shared/recs/f32-kernel.wat', out: 'shared/recs/f32-kernel.ts', name: 'F32_KERNEL_WASM' },
] as const;

/** A kernel's source assembled, as base64 (what its module holds). */
export async function assembledKernel(k: (typeof WASM_KERNELS)[number]): Promise<string> {
  return Buffer.from(await assembleWat(readFileSync(k.src, 'utf8'))).toString('base64');
}
