/**
 * The local task processes of a handler thread (the training worker's, the maintenance pass's)
 * are started by the main thread (shared/recs/launcher.ts `useTaskSpawner`): only the thread that
 * spawned a process reaps it, and a handler thread can be ended while its task runs (the training
 * worker at its time limit, a thread that exited on its own). Until 2026-12-07 such a task, once
 * it exited, stayed a zombie for as long as the stack ran.
 */
import { spawn } from 'node:child_process';
import type { MessagePort, Worker } from 'node:worker_threads';
// Not launcher.ts: a handler thread sets its spawner before it says ready, without loading the training code.
import { useTaskSpawner } from '../shared/recs/task-spawner.ts';

/** A thread's request to start a task process. */
type SpawnCall = { type: 'task-spawn'; id: number; args: string[]; cwd: string; env: Record<string, string | undefined> };
/** The main thread's answers: the process runs (or could not start), then it exited. */
export type SpawnDone = { type: 'task-spawned'; id: number; pid?: number; error?: string } | { type: 'task-exited'; id: number };

/**
 * In a handler thread: its task processes are started by the main thread, through `port`. Answers
 * the handler of the main thread's messages, which takes its answers and says whether the
 * message was one.
 */
export function useMainThreadSpawner(port: MessagePort): (m: { type?: string }) => boolean {
  const calls = new Map<number, { spawned: (r: { pid?: number; error?: string }) => void; exited: () => void }>();
  let next = 0;
  useTaskSpawner(
    (args, opts) =>
      new Promise((resolve, reject) => {
        const id = next++;
        let exited: () => void = () => undefined;
        const exit = new Promise<void>((r) => (exited = r));
        calls.set(id, {
          spawned: (r) => {
            if (r.pid === undefined) {
              calls.delete(id);
              reject(new Error(r.error ?? 'the task process did not start'));
            } else resolve({ pid: r.pid, exited: exit });
          },
          exited: () => {
            calls.delete(id);
            exited();
          },
        });
        port.postMessage({ type: 'task-spawn', id, args, cwd: opts.cwd, env: opts.env } satisfies SpawnCall);
      }),
  );
  return (m) => {
    if (m.type !== 'task-spawned' && m.type !== 'task-exited') return false;
    const done = m as SpawnDone;
    const c = calls.get(done.id);
    if (done.type === 'task-spawned') c?.spawned(done);
    else c?.exited();
    return true;
  };
}

/** On the main thread: a thread's request to start a task process (other messages are passed over), started in this thread. */
export function answerSpawnCall(m: { type?: string }, worker: Worker): void {
  if (m.type !== 'task-spawn') return;
  const c = m as SpawnCall;
  // As shared/recs/launcher.ts spawnInThisThread starts it. Its end is posted to the thread; one
  // since ended gets nothing, and the process is reaped here all the same.
  const child = spawn(process.execPath, c.args, { cwd: c.cwd, env: c.env, stdio: ['ignore', 'inherit', 'inherit'] });
  // Reaped while this process runs (its end still comes), but not kept alive for it: held by the
  // thread, the task let the process end once the stack closed; held here (ref'd), a closed stack's
  // process (a test's, bin/fuzz.ts) ran on until the task ended.
  child.unref();
  child.once('spawn', () => worker.postMessage({ type: 'task-spawned', id: c.id, pid: child.pid ?? 0 } satisfies SpawnDone));
  child.once('error', (e) => worker.postMessage({ type: 'task-spawned', id: c.id, error: String(e) } satisfies SpawnDone));
  child.once('exit', () => worker.postMessage({ type: 'task-exited', id: c.id } satisfies SpawnDone));
}
