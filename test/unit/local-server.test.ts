import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readServerConfig } from '../../shared/config.ts';
import { accessLine, batchedLines, messageLine } from '../../local/access-log.ts';
import { ended, lockDataDir, lockFile, StartupError, startTimeOf } from '../../local/lock.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'recsearch-lock-'));
  dirs.push(d);
  return d;
};

describe('access log lines', () => {
  const entry = { time: new Date('2026-11-25T10:15:02.113Z'), method: 'POST', path: '/v1/events', status: 201, ms: 35.24, tenant: 'demo', request_id: '6eba8ebf-1c1d-4a57-9a43-3f1c2c7d9e01' };

  it('reads as one line: time, method, path, status, ms, tenant and request_id', () => {
    expect(accessLine(entry, 'text')).toBe('2026-11-25T10:15:02.113Z POST /v1/events 201 35.2 ms tenant=demo request_id=6eba8ebf-1c1d-4a57-9a43-3f1c2c7d9e01');
    // Before authentication (the token endpoint, a 401), or without a request id (a static file).
    expect(accessLine({ ...entry, tenant: undefined, request_id: undefined, status: 401 }, 'text')).toMatch(/ 401 35\.2 ms tenant=- request_id=-$/);
  });

  it('is one JSON object per line with LOG_FORMAT=json', () => {
    const line = accessLine(entry, 'json');
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      time: '2026-11-25T10:15:02.113Z',
      level: 'info',
      msg: 'request',
      method: 'POST',
      path: '/v1/events',
      status: 201,
      ms: 35.2,
      tenant: 'demo',
      request_id: entry.request_id,
    });
    expect(JSON.parse(accessLine({ ...entry, tenant: undefined, request_id: undefined }, 'json'))).toMatchObject({ tenant: null, request_id: null });
    expect(JSON.parse(messageLine('demo: ready', 'json'))).toMatchObject({ level: 'info', msg: 'demo: ready' });
    expect(messageLine('demo: ready', 'text')).toBe('demo: ready');
  });
});

describe('batched access log lines', () => {
  it('writes the lines of one turn of the event loop together, in order, and nothing when none is pending', async () => {
    const writes: string[] = [];
    const log = batchedLines((text) => writes.push(text));
    log.line('a');
    log.line('b');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n']);
    log.line('c');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });

  it('writes what is pending at once on flush (before another line, or on exit)', async () => {
    const writes: string[] = [];
    const log = batchedLines((text) => writes.push(text));
    log.line('a');
    log.flush();
    expect(writes).toEqual(['a\n']);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\n']);
  });
});

describe('server settings (readServerConfig)', () => {
  it('defaults: .data, port 3000 on 127.0.0.1, text logs, the demo shop', () => {
    expect(readServerConfig({})).toEqual({ dataDir: '.data', port: 3000, host: '127.0.0.1', logFormat: 'text', demo: true });
  });

  it('reads PORT (0 for a free one), LOG_FORMAT and DEMO', () => {
    expect(readServerConfig({ PORT: '0', LOG_FORMAT: 'json', DEMO: '0', DATA_DIR: '/tmp/x', HOST: '0.0.0.0' })).toEqual({
      dataDir: '/tmp/x',
      port: 0,
      host: '0.0.0.0',
      logFormat: 'json',
      demo: false,
    });
    expect(readServerConfig({ DEMO: 'false' }).demo).toBe(false);
    expect(readServerConfig({ DEMO: 'true' }).demo).toBe(true);
    expect(readServerConfig({ LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
  });

  it('fails with the variable name on a bad value', () => {
    expect(() => readServerConfig({ PORT: 'eighty' })).toThrow(/^Environment variable PORT must be a port number/);
    expect(() => readServerConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => readServerConfig({ LOG_FORMAT: 'xml' })).toThrow(/^Environment variable LOG_FORMAT must be one of text, json, got "xml"/);
    expect(() => readServerConfig({ DEMO: 'maybe' })).toThrow(/^Environment variable DEMO must be one of/);
  });
});

describe('data directory lock', () => {
  it('is taken, refused while its process runs (this one too), and released', () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
    expect(() => lockDataDir(dir)).toThrow(StartupError);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by another server \\(pid ${process.pid}\\)`));
    release();
    expect(existsSync(lockFile(dir))).toBe(false);
    lockDataDir(dir)();
  });

  it('is taken over from a process that is gone, or when it is not a lock at all', () => {
    const dir = tempDir();
    // A pid that was running a moment ago and is not any more.
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    writeFileSync(lockFile(dir), JSON.stringify({ pid: gone }));
    const release = lockDataDir(dir);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
    release();
    writeFileSync(lockFile(dir), 'garbage');
    lockDataDir(dir)();
    expect(existsSync(lockFile(dir))).toBe(false);
  });

  it('is taken over when its pid now belongs to a later process, this one included (a container started again)', () => {
    const dir = tempDir();
    // A killed server's lock, whose pid is this process's in a new container: it started earlier.
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid, start: '1', role: 'server' }));
    const release = lockDataDir(dir);
    const taken = JSON.parse(readFileSync(lockFile(dir), 'utf8'));
    expect(taken.start).toBe(startTimeOf(process.pid));
    expect(taken.start).not.toBe('1');
    // The same for another running process's pid (the parent's: npm's, in a container).
    release();
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.ppid, start: '1' }));
    lockDataDir(dir)();
    // With its own start time it is that process's, running: refused.
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.ppid, start: startTimeOf(process.ppid) }));
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by another server \\(pid ${process.ppid}\\)`));
    // A lock written before start times (none): a running pid holds it, as before, unless that pid
    // is this process's, which records its own start time.
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.ppid }));
    expect(() => lockDataDir(dir)).toThrow(StartupError);
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid }));
    lockDataDir(dir)();
  });

  it('is taken over from a process that was killed but not reaped yet (a zombie answers signals as if it ran)', async () => {
    const dir = tempDir();
    // The shell, replaced by `sleep 30`, never waits for its child `sleep 1`. The child outlives the
    // exec by a second: one that ended before it (`sleep 0`) could be reaped by the shell itself, and
    // then never became a zombie (the test failed so once in CI, under load).
    const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString()))));
      for (let i = 0; i < 300 && !ended(pid); i++) await new Promise((r) => setTimeout(r, 50));
      expect(ended(pid)).toBe(true);
      writeFileSync(lockFile(dir), JSON.stringify({ pid, start: startTimeOf(pid), role: 'server' }));
      lockDataDir(dir)();
    } finally {
      parent.kill();
    }
  }, 30_000);

  it('says in one line that a data directory cannot be written', () => {
    expect(() => lockDataDir(join(tempDir(), 'missing'))).toThrow(/^The data directory .* cannot be written \(ENOENT/);
  });

  it('is not removed by a release once another process took it over', () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    writeFileSync(lockFile(dir), JSON.stringify({ pid: 1 }));
    release();
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(1);
  });
});

describe('handler threads (local/threaded-handler.ts)', () => {
  it('refuse to start when the thread ends before it is ready, with or without an error', async () => {
    const { startHandlerThread } = await import('../../local/threaded-handler.ts');
    const dir = tempDir();
    const exits = join(dir, 'exits.mjs');
    writeFileSync(exits, 'process.exit(3);\n');
    const throws = join(dir, 'throws.mjs');
    writeFileSync(throws, "throw new Error('no such handler');\n");
    const start = (file: string) => startHandlerThread({ entry: pathToFileURL(file).href });
    await expect(start(exits)).rejects.toThrow('the handler thread ended before it was ready (exit code 3)');
    await expect(start(throws)).rejects.toThrow('no such handler');
  });
});

describe('the local database thread', () => {
  it('says why it stopped (the error that ended it, else its exit code), once', async () => {
    const { Worker } = await import('node:worker_threads');
    const { watchThread } = await import('../../local/dynamo.ts');
    const told = (code: string) =>
      new Promise<string[]>((resolve) => {
        const reasons: string[] = [];
        const worker = new Worker(code, { eval: true });
        watchThread(worker, (reason) => reasons.push(reason));
        worker.once('exit', () => setImmediate(() => resolve(reasons)));
      });
    expect(await told("throw new Error('ENOSPC: no space left on device, write')")).toEqual(['ENOSPC: no space left on device, write']);
    expect(await told('process.exit(4)')).toEqual(['its thread exited (code 4)']);
  });
});
