import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** Where artifacts (search indexes, models) live: S3 on AWS, a folder locally. */
export interface BlobStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, body: Uint8Array | string): Promise<void>;
}

export class FolderBlobStore implements BlobStore {
  constructor(private readonly root: string) {}
  private path(key: string): string {
    if (key.split('/').some((p) => p === '..' || p === '')) throw new Error(`Bad blob key ${key}`);
    return join(this.root, key);
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    const p = this.path(key);
    return existsSync(p) ? new Uint8Array(readFileSync(p)) : undefined;
  }
  async put(key: string, body: Uint8Array | string): Promise<void> {
    const p = this.path(key);
    mkdirSync(dirname(p), { recursive: true });
    // Write then rename: a reader never sees half an artifact.
    writeFileSync(`${p}.tmp`, body);
    renameSync(`${p}.tmp`, p);
  }
}

export class S3BlobStore implements BlobStore {
  constructor(private readonly s3: S3Client, private readonly bucket: string) {}
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.Body ? await out.Body.transformToByteArray() : undefined;
    } catch (e) {
      if (e instanceof NoSuchKey || (e instanceof Error && e.name === 'NoSuchKey')) return undefined;
      throw e;
    }
  }
  async put(key: string, body: Uint8Array | string): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
  }
}

let shared: BlobStore | undefined;

/** The container's blob store: ARTIFACT_BUCKET (S3) or BLOB_DIR (local folder). */
export function blobs(): BlobStore {
  if (!shared) {
    const bucket = process.env.ARTIFACT_BUCKET;
    const dir = process.env.BLOB_DIR;
    if (bucket) shared = new S3BlobStore(new S3Client({ region: process.env.AWS_REGION || 'us-east-1' }), bucket);
    else if (dir) shared = new FolderBlobStore(dir);
    else throw new Error('Missing required environment variable ARTIFACT_BUCKET (or BLOB_DIR locally)');
  }
  return shared;
}
