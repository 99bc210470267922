import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_SECURITY_HEADERS } from '../shared/console-auth/headers.ts';
import { sleep } from '../shared/retry.ts';

/*
 * The console web app in the local stack: built by Vite into console/dist (when missing or older
 * than its sources, once per machine however many stacks start at once) and served at /console/.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_SRC = join(root, 'console');
export const CONSOLE_DIST = join(CONSOLE_SRC, 'dist');
const STAMP = join(CONSOLE_DIST, '.built-from');
const LOCK = join(root, '.cache', 'console-build.lock');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * What the console's sources (everything under console/ but dist) are: a digest of each file's
 * path, size and modification time. Any change to it is a change, a file put back with an older
 * time too (a newest-time stamp missed that, and served a build of the file's other version).
 */
function sourcesStamp(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name === 'dist' || e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const st = statSync(p);
        hash.update(`${p}\0${st.size}\0${st.mtimeMs}\n`);
      }
    }
  };
  walk(CONSOLE_SRC);
  return hash.digest('hex');
}

/** Whether console/dist is missing or was built from other sources than these. */
export function consoleBuildStale(): boolean {
  if (!existsSync(STAMP)) return true;
  return readFileSync(STAMP, 'utf8') !== sourcesStamp();
}

/** The vite build of the console into `outDir`, as node's arguments. */
const viteArgs = (outDir: string) => [
  join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
  'build',
  '--config',
  join(CONSOLE_SRC, 'vite.config.ts'),
  '--outDir',
  outDir,
  '--emptyOutDir',
  '--logLevel',
  'warn',
];
// Always a production build (React's development build is twice the size): test runners set NODE_ENV=test.
const viteEnv = () => ({ ...process.env, NODE_ENV: 'production' });
/** A build becomes console/dist, stamped with the sources it was built from (`sourcesStamp`). */
function publish(out: string, started: string): void {
  writeFileSync(join(out, '.built-from'), started);
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  renameSync(out, CONSOLE_DIST);
}

function viteBuild(outDir: string): Promise<void> {
  return new Promise((resolveBuild, reject) => {
    const child = spawn(process.execPath, viteArgs(outDir), { cwd: root, env: viteEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolveBuild() : reject(new Error(`console build failed (vite exited ${code}): ${err.slice(-2000)}`))));
  });
}

/**
 * Builds the console unless console/dist is up to date. Concurrent stacks (test workers) take a
 * lock directory; the others wait for its build. The build goes to a fresh folder that then
 * replaces dist, so a server never reads a half-written one.
 */
export async function buildConsole(opts: { force?: boolean } = {}): Promise<void> {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    if (!opts.force && !consoleBuildStale()) return;
    try {
      mkdirSync(LOCK);
    } catch {
      // Someone builds; a lock older than 3 minutes is a build that died.
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 180_000) rmSync(LOCK, { recursive: true, force: true });
      await sleep(250);
      continue;
    }
    try {
      if (!opts.force && !consoleBuildStale()) return;
      const started = sourcesStamp();
      const out = `${CONSOLE_DIST}.tmp-${process.pid}`;
      await viteBuild(out);
      publish(out, started);
      return;
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

/**
 * The same, synchronously, for synthesis (lib/console.ts): console/dist, built first if stale.
 * Answers the folder to deploy.
 */
export function buildConsoleSync(): string {
  if (!consoleBuildStale()) return CONSOLE_DIST;
  const started = sourcesStamp();
  const out = `${CONSOLE_DIST}.tmp-${process.pid}`;
  execFileSync(process.execPath, viteArgs(out), { cwd: root, env: viteEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  publish(out, started);
  return CONSOLE_DIST;
}

let ready: Promise<void> | undefined;
/** Starts (once per process) making sure the console is built; requests for it wait for this. */
export function prepareConsole(): Promise<void> {
  ready ??= buildConsole();
  ready.catch((e: unknown) => console.error(JSON.stringify({ level: 'ERROR', message: 'console build failed', error: String(e) })));
  return ready;
}

export const isConsolePath = (path: string): boolean => path === '/console' || path.startsWith('/console/');
/** A path the Platform API answers when no route takes it (its 404/405 in the Platform envelope): `/api` and the console's paths. */
export const isPlatformPath = (path: string): boolean => path === '/api' || path.startsWith('/api/') || isConsolePath(path);
/** A path the console's files answer: under /console/ but not its API (`/console/session`, `/console/api/`), whose unknown paths are Platform 404s. */
export const isConsoleFile = (path: string): boolean =>
  isConsolePath(path) && path !== '/console/session' && !path.startsWith('/console/session/') && path !== '/console/api' && !path.startsWith('/console/api/');

/** Serves a console file (GET/HEAD), with its content type and the console's security headers. */
export async function serveConsole(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (path === '/console') {
    res.writeHead(301, { location: '/console/' }).end();
    return;
  }
  try {
    await prepareConsole();
  } catch (e) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end(`The console could not be built: ${String(e)}`);
    return;
  }
  let rel: string;
  try {
    rel = decodeURIComponent(path.slice('/console/'.length)) || 'index.html';
  } catch {
    res.writeHead(400).end();
    return;
  }
  const file = normalize(join(CONSOLE_DIST, rel));
  // No file outside dist, and none whose name (in any folder, as the path resolves) starts with a
  // dot: `.built-from` was served as `/console/assets/..%2f.built-from` (the check read the name
  // as sent, not as resolved). A name the file system cannot look up (a NUL, one too long, a
  // folder path through a file) is not found either: statSync threw those, and the server
  // answered 500 (until 2026-12-07).
  const inDist =
    file.startsWith(CONSOLE_DIST + sep) &&
    !file
      .slice(CONSOLE_DIST.length + 1)
      .split(sep)
      .some((part) => part.startsWith('.'));
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = inDist ? statSync(file, { throwIfNoEntry: false }) : undefined;
  } catch {
    stat = undefined;
  }
  if (!stat?.isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...CONSOLE_SECURITY_HEADERS }).end('Not found');
    return;
  }
  const body = readFileSync(file);
  // By the file the path resolves to, not the name as sent (`/console/assets/..%2findex.html` was
  // index.html cached for a year, until 2026-12-07).
  const hashed = file.startsWith(join(CONSOLE_DIST, 'assets') + sep);
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': String(body.length),
    // Vite names assets by their content: cached for good; index.html always revalidated.
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
    ...CONSOLE_SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
