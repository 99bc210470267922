import { mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AwsClient, AwsHttpError, encodeKeyPath, type AwsCallOptions } from './aws/signed-fetch.ts';
import { config } from './config.ts';
import { deadlineSignal } from './deadline.ts';
import { replaceFile } from './files.ts';

/** Where artifacts (search indexes, models) live: S3 on AWS, a folder locally. */
export interface BlobStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, body: Uint8Array | string): Promise<void>;
  /** Removes the object; a key that is not there is no error. */
  delete(key: string): Promise<void>;
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
}

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
