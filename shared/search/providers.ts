import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { config } from '../config.ts';
import { HashingEmbedding, normalize, type EmbeddingProvider } from './embedding.ts';

export const TITAN_V2 = 'amazon.titan-embed-text-v2:0';

/** Amazon Bedrock Titan Text Embeddings V2: one InvokeModel per text, normalised, 256/512/1024 dimensions. */
export class BedrockTitanEmbedding implements EmbeddingProvider {
  readonly name = TITAN_V2;
  constructor(
    private readonly client: BedrockRuntimeClient,
    readonly dimensions: 256 | 512 | 1024 = 512,
  ) {}

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

/** Cache: the container's embedding provider, made on first use. Bound: one. */
let shared: EmbeddingProvider | undefined;

/**
 * EMBEDDING_PROVIDER = local (default) | bedrock; EMBEDDING_DIMENSIONS = 256 | 512 (default) | 1024.
 * The Lambda bundles get EMBEDDING_PROVIDER as a build-time constant (lib/service-function.ts),
 * so a stack that embeds locally leaves the Bedrock client out of its bundles: keep reading it
 * as `process.env.EMBEDDING_PROVIDER` right here, where esbuild can fold it.
 */
export function embeddingProvider(): EmbeddingProvider {
  if (!shared) {
    // Validated (EMBEDDING_PROVIDER, EMBEDDING_DIMENSIONS) by shared/config.ts.
    const { dimensions } = config().embedding;
    if (process.env.EMBEDDING_PROVIDER === 'bedrock') shared = new BedrockTitanEmbedding(new BedrockRuntimeClient({ region: config().region }), dimensions);
    else shared = new HashingEmbedding(dimensions);
  }
  return shared;
}
