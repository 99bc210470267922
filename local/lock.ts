import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withRetrySync } from '../shared/retry.ts';

/** A start-up failure the local server reports in one line (no stack trace) before it exits. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Whether a process with this id runs (one of another user's answers EPERM: it runs too). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When a process started, as Linux counts it (clock ticks since boot, /proc/<pid>/stat's 22nd
 * field), or undefined where there is no /proc or no such process: with its pid, it tells a
 * process from a later one given the same pid (a container started again numbers its processes
 * as before, so a killed server's pid is often the new server's own, or its parent's).
 */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces; the 3rd field is first.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether the process has ended but not been reaped by its parent yet (a zombie, /proc/<pid>/stat's
 * 3rd field `Z`; `X` while it goes): it answers signals as if it ran. A server killed with kill -9
 * is one until its parent waits for it, which some never do soon (a container's first process, a
 * script that started it and restarts it at once).
 */
export function ended(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

/** Whether the lock's process still runs: its pid is alive (not a zombie) and, where both are known, started when the lock says. */
export function running(held: { pid: number; start?: string | undefined }): boolean {
  if (!alive(held.pid) || ended(held.pid)) return false;
  // This process's own pid with no start time: written by an earlier process given the same pid
  // (before start times were recorded), since this one records its own.
  if (held.pid === process.pid && held.start === undefined && startTimeOf(process.pid) !== undefined) return false;
  const now = held.start === undefined ? undefined : startTimeOf(held.pid);
  return now === undefined || now === held.start;
}

export const lockFile = (dataDir: string) => join(dataDir, 'server.lock');

/** Why a file system call on the data directory fails that a person can fix: a read-only or full disk, no permission, no such folder. */
const UNWRITABLE = new Set(['EROFS', 'ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'ENOENT', 'ENOTDIR', 'EEXIST']);

/**
 * The data directory cannot be made or written: a StartupError that says so in one line (the
 * server's first writes are the folder and its lock); any other error as it is.
 */
export function unwritableDataDir(dataDir: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === undefined || !UNWRITABLE.has(code)) return e;
  return new StartupError(`The data directory ${dataDir} cannot be written (${(e as Error).message}). Free some space or make it writable, or use another one (DATA_DIR=...).`);
}

/** Who holds the data directory: a server (`npm start`) or an admin command that opened it itself. */
export type LockRole = 'server' | 'admin command';

function holder(file: string): { pid: number; start?: string | undefined; role: LockRole } | undefined {
  try {
    const lock = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; start?: unknown; role?: unknown };
    const pid = Number(lock.pid);
    const start = typeof lock.start === 'string' ? lock.start : undefined;
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, start, role: lock.role === 'admin command' ? 'admin command' : 'server' } : undefined;
  } catch {
    return undefined; // gone meanwhile, or not a lock of ours
  }
}

/**
 * Takes the data directory for this process: `server.lock` holds its pid and start time (the
 * database's files must not be opened by two processes). A lock whose process is gone (it was
 * killed, or the machine or container restarted: the pid may then be another process's, this
 * one's included, started later) is taken over; one of a running process (this one included: a
 * second stack of this process on the same directory) is refused with a StartupError. Answers
 * the release, which removes the lock if it is still this process's.
 */
export function lockDataDir(dataDir: string, role: LockRole = 'server'): () => void {
  const file = lockFile(dataDir);
  // Written whole first, then linked into place (which fails if a lock exists): a lock is never
  // seen half written.
  const mine = `${file}.${process.pid}`;
  try {
    writeFileSync(mine, `${JSON.stringify({ pid: process.pid, start: startTimeOf(process.pid), role, started_at: new Date().toISOString() })}\n`);
  } catch (e) {
    rmSync(mine, { force: true });
    throw unwritableDataDir(dataDir, e);
  }
  try {
    return takeLock(dataDir, file, mine);
  } finally {
    rmSync(mine, { force: true });
  }
}

/** 5 attempts to link the lock into place, each after removing a stale one, at once. */
function takeLock(dataDir: string, file: string, mine: string): () => void {
  return withRetrySync<() => void>(5, () => {
    try {
      linkSync(mine, file);
      let released = false;
      return {
        value: () => {
          if (released) return;
          released = true;
          const now = holder(file);
          if (now?.pid === process.pid && now.start === startTimeOf(process.pid)) rmSync(file, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = holder(file);
    if (held && running(held)) {
      throw new StartupError(`${dataDir} is in use by another ${held.role} (pid ${held.pid}). Stop that one first, or use another data directory (DATA_DIR=...).`);
    }
    // Stale: its process is gone. Removed unless another start replaced it meanwhile; whoever
    // links the next one first wins.
    if (holder(file)?.pid === held?.pid) rmSync(file, { force: true });
    return { failure: new StartupError(`Could not take the lock ${file}: other servers keep starting on ${dataDir}.`), retryable: true };
  });
}
