// The part of the WebAssembly JavaScript API the vector kernel uses (lib "ES2022" has none of it;
// Node provides it as a global).
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, Memory | ((...args: number[]) => number)>>);
    readonly exports: Record<string, unknown>;
  }
}
