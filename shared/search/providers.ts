import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { HashingEmbedding, normalize, type EmbeddingProvider } from './embedding.ts';

export const TITAN_V2 = 'amazon.titan-embed-text-v2:0';

/** Amazon Bedrock Titan Text Embeddings V2: one InvokeModel per text, normalised, 256/512/1024 dimensions. */
export class BedrockTitanEmbedding implements EmbeddingProvider {
  readonly name = TITAN_V2;
  constructor(private readonly client: BedrockRuntimeClient, readonly dimensions: 256 | 512 | 1024 = 512) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.all(
      texts.map(async (inputText) => {
        const out = await this.client.send(
          new InvokeModelCommand({
            modelId: TITAN_V2,
            contentType: 'application/json',
            accept: 'application/json',
            // Titan takes at most 50,000 characters.
            body: JSON.stringify({ inputText: inputText.slice(0, 50_000) || ' ', dimensions: this.dimensions, normalize: true }),
          }),
        );
        const parsed = JSON.parse(new TextDecoder().decode(out.body)) as { embedding?: number[] };
        if (!Array.isArray(parsed.embedding) || parsed.embedding.length !== this.dimensions) {
          throw new Error(`Bedrock returned no ${this.dimensions}-dimensional embedding`);
        }
        return normalize(Float32Array.from(parsed.embedding));
      }),
    );
  }
}

let shared: EmbeddingProvider | undefined;

/**
 * EMBEDDING_PROVIDER = local (default) | bedrock; EMBEDDING_DIMENSIONS = 256 | 512 (default) | 1024.
 * The Lambda bundles get EMBEDDING_PROVIDER as a build-time constant (lib/service-function.ts),
 * so a stack that embeds locally leaves the Bedrock client out of its bundles: keep reading it
 * as `process.env.EMBEDDING_PROVIDER` right here, where esbuild can fold it.
 */
export function embeddingProvider(): EmbeddingProvider {
  if (!shared) {
    const dims = Number(process.env.EMBEDDING_DIMENSIONS || 512);
    if (![256, 512, 1024].includes(dims)) throw new Error(`EMBEDDING_DIMENSIONS must be 256, 512 or 1024, got ${dims}`);
    const kind = process.env.EMBEDDING_PROVIDER || 'local';
    if (process.env.EMBEDDING_PROVIDER === 'bedrock') shared = new BedrockTitanEmbedding(new BedrockRuntimeClient({ region: process.env.AWS_REGION || 'us-east-1' }), dims as 256 | 512 | 1024);
    else if (kind === 'local') shared = new HashingEmbedding(dims);
    else throw new Error(`EMBEDDING_PROVIDER must be local or bedrock, got ${kind}`);
  }
  return shared;
}
