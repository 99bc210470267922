import { describe, expect, it } from 'vitest';
import { assembledKernel, WASM_KERNELS } from '../helpers/wat.ts';

describe('WebAssembly kernels', () => {
  it.each(WASM_KERNELS)('$out is the assembled $src (run `npm run build:wasm` after editing it)', async (k) => {
    const module = (await import(`../../${k.out}`)) as Record<string, unknown>;
    expect(module[k.name]).toBe(await assembledKernel(k));
  });
});
