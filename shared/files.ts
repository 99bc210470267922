import { renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes `file` whole or not at all: a temporary file, written to its last byte (writeFileSync
 * goes on after a write that took only part of it) and flushed to disk, then renamed over it. A
 * crash, even of the machine, leaves the old file or the new one, never a part of either.
 */
export function replaceFile(file: string, data: string | Uint8Array, mode = 0o644): void {
  const tmp = `${file}.tmp`;
  try {
    writeFileSync(tmp, data, { mode, flush: true });
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  renameSync(tmp, file);
}
