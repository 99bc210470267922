import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AwsClient, AwsHttpError, encodeKeyPath, type AwsCallOptions } from './aws/signed-fetch.ts';
import { config } from './config.ts';
import { deadlineSignal } from './deadline.ts';
import { replaceFile } from './files.ts';
import { withRetry } from './retry.ts';

/** Where artifacts (search indexes, models) live: S3 on AWS, a folder locally. */
export interface BlobStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, body: Uint8Array | string): Promise<void>;
  /** Removes the object; a key that is not there is no error. */
  delete(key: string): Promise<void>;
  /** The object with its version tag (S3's ETag), for a `putIfUnchanged` of it; undefined when there is none. */
  getTagged(key: string): Promise<{ body: Uint8Array; tag: string } | undefined>;
  /**
   * Writes the object only if it is still at `tag` (`null`: only if there is none): false when
   * another write came first (read it again and decide). For an object several workers replace,
   * such as a search index's pointer, where the last writer must not undo a newer write.
   */
  putIfUnchanged(key: string, body: Uint8Array | string, tag: string | null): Promise<boolean>;
}

/**
 * Locally, the check of each call against the calling function's grant (local/grants.ts sets
 * it); on AWS S3 checks the role.
 */
let folderGuard: ((op: 'get' | 'put' | 'delete', key: string) => void) | undefined;
export function guardFolderBlobs(guard: typeof folderGuard): void {
  folderGuard = guard;
}

export class FolderBlobStore implements BlobStore {
  constructor(private readonly root: string) {}
  private path(key: string, op: 'get' | 'put' | 'delete'): string {
    if (key.split('/').some((p) => p === '..' || p === '')) throw new Error(`Bad blob key ${key}`);
    folderGuard?.(op, key);
    return join(this.root, key);
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    const p = this.path(key, 'get');
    // A Buffer is a Uint8Array: no second copy of a large artifact.
    return existsSync(p) ? readFileSync(p) : undefined;
  }
  async put(key: string, body: Uint8Array | string): Promise<void> {
    const p = this.path(key, 'put');
    // Not once the request's deadline passed (shared/deadline.ts), as the table's calls.
    deadlineSignal()?.throwIfAborted();
    mkdirSync(dirname(p), { recursive: true });
    // Written whole, flushed, then renamed: a reader never sees half an artifact, nor a pointer
    // to an artifact a crash of the machine emptied.
    replaceFile(p, body);
  }
  async delete(key: string): Promise<void> {
    const p = this.path(key, 'delete');
    deadlineSignal()?.throwIfAborted();
    rmSync(p, { force: true });
  }
  async getTagged(key: string): Promise<{ body: Uint8Array; tag: string } | undefined> {
    const body = await this.get(key);
    return body && { body, tag: contentTag(body) };
  }
  /**
   * Compared and replaced under a lock file (`<file>.lock`, created exclusively): the local stack's
   * workers run in threads of one process, so two may publish at once. The comparison and the
   * write are synchronous, so a lock is held for a moment; one left by a process killed inside
   * that moment is taken over once it is older than `STALE_LOCK_MS`.
   */
  async putIfUnchanged(key: string, body: Uint8Array | string, tag: string | null): Promise<boolean> {
    const p = this.path(key, 'put');
    deadlineSignal()?.throwIfAborted();
    mkdirSync(dirname(p), { recursive: true });
    const lock = `${p}.lock`;
    await withRetry({ attempts: 50, baseMs: 2, maxMs: 50, jitter: 'full' }, async () => {
      try {
        closeSync(openSync(lock, 'wx'));
        return { value: undefined };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > STALE_LOCK_MS) rmSync(lock, { force: true });
        return { failure: new Error(`Blob ${key} stayed locked (${lock})`), retryable: true };
      }
    });
    try {
      const now = existsSync(p) ? contentTag(readFileSync(p)) : null;
      if (now !== tag) return false;
      replaceFile(p, body);
      return true;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/** A lock file older than this was left by a process that died holding it (FolderBlobStore). */
const STALE_LOCK_MS = 5000;

/** A folder object's version tag: its content's SHA-256. */
const contentTag = (body: Uint8Array | string): string => createHash('sha256').update(body).digest('hex');

/**
 * S3 through the small SigV4 client (GetObject, PutObject). A missing key is `undefined`: S3
 * answers 404 NoSuchKey for it because the functions may also list the artifact prefixes
 * (without s3:ListBucket it would be 403 AccessDenied, indistinguishable from a real denial).
 */
export class S3BlobStore implements BlobStore {
  private readonly client: AwsClient;
  /** `endpoint` defaults to the bucket's virtual-hosted URL; tests pass a path-style stand-in. */
  constructor(bucket: string, region: string, options: AwsCallOptions & { endpoint?: string } = {}) {
    const url = options.endpoint ?? `https://${bucket}.s3.${region}.amazonaws.com`;
    this.client = new AwsClient({ url, region, service: 's3', s3: true }, options);
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const res = await this.client.send('GET', encodeKeyPath(key));
      return new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      if (e instanceof AwsHttpError && e.code === 'NoSuchKey') return undefined;
      throw e;
    }
  }
  async put(key: string, body: Uint8Array | string): Promise<void> {
    // Each attempt refused once the request's deadline passed (shared/deadline.ts), as the table's calls.
    await this.client.send('PUT', encodeKeyPath(key), { body, headers: { 'content-type': 'application/octet-stream' }, signal: deadlineSignal() });
  }
  async getTagged(key: string): Promise<{ body: Uint8Array; tag: string } | undefined> {
    try {
      const res = await this.client.send('GET', encodeKeyPath(key));
      const tag = res.headers.get('etag');
      if (!tag) throw new Error(`S3 answered GET ${key} without an ETag`);
      return { body: new Uint8Array(await res.arrayBuffer()), tag };
    } catch (e) {
      if (e instanceof AwsHttpError && e.code === 'NoSuchKey') return undefined;
      throw e;
    }
  }
  /**
   * S3's conditional write (PutObject with If-Match, or If-None-Match: * for none): 412
   * PreconditionFailed when the object changed, 409 ConditionalRequestConflict when another
   * conditional write of it is under way; both answer false, for the caller to read it again. A
   * write whose answer was lost and was retried answers 412 too: the caller then reads its own.
   */
  async putIfUnchanged(key: string, body: Uint8Array | string, tag: string | null): Promise<boolean> {
    const condition: Record<string, string> = tag === null ? { 'if-none-match': '*' } : { 'if-match': tag };
    try {
      await this.client.send('PUT', encodeKeyPath(key), { body, headers: { 'content-type': 'application/octet-stream', ...condition }, signal: deadlineSignal() });
      return true;
    } catch (e) {
      if (e instanceof AwsHttpError && (e.status === 412 || e.status === 409)) return false;
      throw e;
    }
  }
  /** DeleteObject: S3 answers 204 whether or not the key was there. */
  async delete(key: string): Promise<void> {
    await this.client.send('DELETE', encodeKeyPath(key), { signal: deadlineSignal() });
  }
}

/** Cache of one: the container's blob store. */
let shared: BlobStore | undefined;

/** The container's blob store: ARTIFACT_BUCKET (S3) or BLOB_DIR (local folder). */
export function blobs(): BlobStore {
  if (!shared) {
    const { storage, region } = config();
    const bucket = storage.artifactBucket;
    const dir = storage.blobDir;
    if (bucket) shared = new S3BlobStore(bucket, region);
    else if (dir) shared = new FolderBlobStore(dir);
    else throw new Error('Missing required environment variable ARTIFACT_BUCKET (or BLOB_DIR locally)');
  }
  return shared;
}
