/**
 * How this thread starts local task processes (shared/recs/launcher.ts `childProcessLauncher`):
 * in this thread by default, or through the local stack's main thread (local/task-spawn.ts). A
 * module of its own, with nothing but node:child_process: every handler thread of the local stack
 * sets its spawner before it says ready, and until 2026-12-07 it loaded launcher.ts for it (0.5 to
 * 1 s of modules on a busy machine, in threads that never start a task: the API's, the
 * embedding worker's).
 */
import { spawn } from 'node:child_process';

/**
 * Starts a local task process (node with `args`), its output going to this process's; answers its
 * pid once it runs, and when it exited.
 */
export type TaskSpawner = (args: string[], opts: { cwd: string; env: Record<string, string | undefined> }) => Promise<{ pid: number; exited: Promise<void> }>;

/** The task process as a child of this thread. */
export const spawnInThisThread: TaskSpawner = async (args, opts) => {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'inherit', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { pid: child.pid ?? 0, exited };
};

let taskSpawner: TaskSpawner = spawnInThisThread;

/**
 * How this thread starts local task processes (this thread by default). Only the thread that
 * spawned a process reaps it: the local stack's handler threads have its main thread start them
 * (local/task-spawn.ts), since a handler thread can be ended while its task runs (the training
 * worker at its time limit), and its task, once exited, stayed a zombie while the stack ran.
 */
export function useTaskSpawner(spawner: TaskSpawner | undefined): void {
  taskSpawner = spawner ?? spawnInThisThread;
}

/** Starts a local task process as this thread's spawner does (`useTaskSpawner`). */
export const spawnTask: TaskSpawner = (args, opts) => taskSpawner(args, opts);
