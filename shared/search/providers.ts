import { AwsClient, type AwsCallOptions } from '../aws/signed-fetch.ts';
import { HashingEmbedding, normalize, type EmbeddingProvider } from './embedding.ts';

export const TITAN_V2 = 'amazon.titan-embed-text-v2:0';

/** Amazon Bedrock Titan Text Embeddings V2: one InvokeModel per text, normalised, 256/512/1024 dimensions. */
export class BedrockTitanEmbedding implements EmbeddingProvider {
  readonly name = TITAN_V2;
  private readonly client: AwsClient;
  /** `endpoint` defaults to the regional bedrock-runtime URL; tests pass a local stand-in. */
  constructor(region: string, readonly dimensions: 256 | 512 | 1024 = 512, options: AwsCallOptions & { endpoint?: string } = {}) {
    this.client = new AwsClient({ url: options.endpoint ?? `https://bedrock-runtime.${region}.amazonaws.com`, region, service: 'bedrock' }, options);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.all(
      texts.map(async (inputText) => {
        // InvokeModel: POST /model/{modelId}/invoke. Titan takes at most 50,000 characters.
        const res = await this.client.send('POST', `/model/${encodeURIComponent(TITAN_V2)}/invoke`, {
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ inputText: inputText.slice(0, 50_000) || ' ', dimensions: this.dimensions, normalize: true }),
        });
        const parsed = (await res.json()) as { embedding?: number[] };
        if (!Array.isArray(parsed.embedding) || parsed.embedding.length !== this.dimensions) {
          throw new Error(`Bedrock returned no ${this.dimensions}-dimensional embedding`);
        }
        return normalize(Float32Array.from(parsed.embedding));
      }),
    );
  }
}

let shared: EmbeddingProvider | undefined;

/** EMBEDDING_PROVIDER = local (default) | bedrock; EMBEDDING_DIMENSIONS = 256 | 512 (default) | 1024. */
export function embeddingProvider(): EmbeddingProvider {
  if (!shared) {
    const dims = Number(process.env.EMBEDDING_DIMENSIONS || 512);
    if (![256, 512, 1024].includes(dims)) throw new Error(`EMBEDDING_DIMENSIONS must be 256, 512 or 1024, got ${dims}`);
    const kind = process.env.EMBEDDING_PROVIDER || 'local';
    if (kind === 'bedrock') shared = new BedrockTitanEmbedding(process.env.AWS_REGION || 'us-east-1', dims as 256 | 512 | 1024);
    else if (kind === 'local') shared = new HashingEmbedding(dims);
    else throw new Error(`EMBEDDING_PROVIDER must be local or bedrock, got ${kind}`);
  }
  return shared;
}
