import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { type Jwks, type JwkWithKid, SimpleJwksCache, SimplePenaltyBox } from 'aws-jwt-verify/jwk';
import type { Fetcher } from 'aws-jwt-verify/https';
import { FetchError, JwksValidationError, KidNotFoundInJwksError, WaitPeriodNotYetEndedJwkError } from 'aws-jwt-verify/error';
import { config, requireSetting } from '../config.ts';
import { Lru } from '../lru.ts';

/** The claims of a Cognito client-credentials access token that this service relies on. */
export interface AccessClaims {
  clientId: string;
  scopes: string[];
}

const hasExpiry = (payload: Record<string, unknown>): payload is Record<string, unknown> & { exp: number } => typeof payload.exp === 'number' && Number.isFinite(payload.exp);

/**
 * aws-jwt-verify's penalty box, which also notes when its wait ends. Once a JWKS it fetched lacks a
 * token's kid, it lets no fetch of the JWKS for `waitSeconds` (10): a token whose kid is not in the
 * cached JWKS (a key Cognito has just rotated in, or a forged kid) meets WaitPeriodNotYetEndedJwkError
 * meanwhile, before any look at the token. Its wait ends when the last failure's does.
 */
class TimedPenaltyBox extends SimplePenaltyBox {
  endsAt = 0;
  override registerFailedAttempt(jwksUri: string): void {
    super.registerFailedAttempt(jwksUri);
    this.endsAt = Date.now() + this.waitSeconds * 1000;
  }
}
/** The penalty box of the container's verifier (made with it). */
const penaltyBox = new TimedPenaltyBox();

/**
 * After a failed fetch of the JWKS (unreachable, timed out, not 200, or no JWKS), no fetch for this
 * long, doubling with each failure in a row up to `FETCH_WAIT_MAX_MS`; a fetch that succeeds ends
 * it. aws-jwt-verify's penalty box arms only when a fetched JWKS lacks a kid, not when the fetch
 * fails, so until 2026-12-07 every token of a kid not cached (a flood of forged ones) fetched the
 * JWKS again, one fetch after another, while Cognito's endpoint failed.
 */
const FETCH_WAIT_MS = 1000;
const FETCH_WAIT_MAX_MS = 10_000;

/** The JWKS may not be fetched yet: a fetch failed less than the wait ago (`endsAt`, ms). No verdict on the token. */
export class JwksFetchWaitError extends FetchError {
  constructor(
    uri: string,
    readonly endsAt: number,
  ) {
    super(uri, 'a fetch of it failed just now; not fetched again before its wait ends');
  }
}

/**
 * At most this many kids are remembered (`KidAwareJwksCache`), the least recently asked for let
 * go. Until 2026-12-07 they were all forgotten when full: a flood of made-up kids made a kid a
 * fetched JWKS had lacked "first asked" again, its token told to retry (503) instead of refused.
 */
export const MAX_ASKED_KIDS = 1000;

/**
 * aws-jwt-verify's JWKS cache, which tells a kid it may not look up yet from one it already looked
 * for: a token whose kid the penalty box keeps from a fetch (WaitPeriodNotYetEndedJwkError, the 503
 * to retry) is refused as its kid's (KidNotFoundInJwksError, the 401) when a JWKS fetched after the
 * kid was first asked for lacked it. Such a token is no token of the issuer's, and no wait makes it
 * one. Until 2026-12-07 (97143e5) it was the 503 for as long as any unknown kid kept the penalty
 * box armed: the very token a fetch had just found no key for (401) was told to retry on its next
 * try, and a forged or expired token of a made-up kid, sent once every 10 s, kept being answered
 * `unavailable` where the spec says 401.
 */
class KidAwareJwksCache extends SimpleJwksCache {
  /** When the fetch of the cached JWKS began (ms): a kid asked for before then and not in it is unknown. */
  private fetchedFrom = Number.NEGATIVE_INFINITY;
  /** When the fetch under way began (one at a time: others join it). */
  private fetching: number | undefined;
  /** When each kid was first asked for (ms). */
  private readonly firstAsked = new Lru<string, number>(MAX_ASKED_KIDS);
  /** Failed fetches in a row, and until when (ms) no fetch starts (`FETCH_WAIT_MS`). */
  private failedFetches = 0;
  private fetchWaitEnds = 0;
  /**
   * Whether a JWKS with a key was ever held (fetched, or preloaded: `addJwks`). Until then every token waits on
   * the fetch, so the wait does not double past `FETCH_WAIT_MS` (review of 624d700c: a fresh
   * container whose first fetches failed answered every request 503 for up to 10 s after the
   * endpoint came back); a container holding keys waits up to `FETCH_WAIT_MAX_MS`, only its
   * tokens of unknown kids waiting.
   */
  private held = false;

  override addJwks(jwksUri: string, jwks: Jwks): void {
    super.addJwks(jwksUri, jwks);
    this.held ||= jwks.keys.length > 0;
  }

  override async getJwks(jwksUri: string): Promise<Jwks> {
    const starts = this.fetching === undefined;
    if (starts && Date.now() < this.fetchWaitEnds) throw new JwksFetchWaitError(jwksUri, this.fetchWaitEnds);
    const began = this.fetching ?? Date.now();
    this.fetching = began;
    try {
      const jwks = await super.getJwks(jwksUri);
      this.fetchedFrom = Math.max(this.fetchedFrom, began);
      this.held ||= jwks.keys.length > 0;
      if (starts) [this.failedFetches, this.fetchWaitEnds] = [0, 0];
      return jwks;
    } catch (e) {
      if (starts) {
        this.failedFetches++;
        this.fetchWaitEnds = Date.now() + Math.min(this.held ? FETCH_WAIT_MAX_MS : FETCH_WAIT_MS, FETCH_WAIT_MS * 2 ** (this.failedFetches - 1));
      }
      throw e;
    } finally {
      if (starts) this.fetching = undefined;
    }
  }

  override async getJwk(jwksUri: string, decomposedJwt: Parameters<SimpleJwksCache['getJwk']>[1]): Promise<JwkWithKid> {
    const kid = decomposedJwt.header.kid;
    // Asked for now: a use (kept the longer), its first time kept. Read before the lookup: kids
    // asked for while it awaits may let this one go (review of 8ef44855: a flood of them at once
    // turned its 401 into the 503).
    let asked: number | undefined;
    if (typeof kid === 'string') {
      asked = this.firstAsked.get(kid);
      if (asked === undefined) this.firstAsked.set(kid, (asked = Date.now()));
    }
    try {
      return await super.getJwk(jwksUri, decomposedJwt);
    } catch (e) {
      // Either wait (the penalty box's, or a failed fetch's: review of 624d700c, which answered the
      // latter with the 503 though a JWKS fetched since had already lacked the kid).
      if ((e instanceof WaitPeriodNotYetEndedJwkError || e instanceof JwksFetchWaitError) && asked !== undefined && asked <= this.fetchedFrom) {
        throw new KidNotFoundInJwksError(`JWK for kid "${kid}" not found in the JWKS fetched since it was first asked for`);
      }
      throw e;
    }
  }
}

/**
 * The JWKS where it is a file only: the local stack's (AUTH_JWKS_FILE), whose issuer's URI is http,
 * which aws-jwt-verify's fetcher refuses (https only). A token of a kid the cached JWKS lacks reads
 * the file again (a file the stack rewrote is read anew); one it cannot read is a failed fetch, as
 * Cognito's endpoint unreachable is (FetchError: the 503 to retry). Until 2026-12-08 the local
 * stack "fetched" its http URI: each such fetch failed ("Protocol http: not supported") and began
 * the wait after a failed fetch (1 s, doubling to 10 s), so a token of a made-up kid (a forged one)
 * was answered 401 when it came as the wait ended and 503 `unavailable` within it, where the spec
 * says 401.
 */
class JwksFileFetcher implements Fetcher {
  constructor(private readonly file: string) {}
  async fetch(uri: string): Promise<ArrayBuffer> {
    const text = await readFile(this.file).catch((e: unknown) => {
      throw new FetchError(uri, `the JWKS file ${this.file} could not be read (${(e as Error).message})`);
    });
    return text.buffer.slice(text.byteOffset, text.byteOffset + text.byteLength) as ArrayBuffer;
  }
}

/**
 * No wait between reads of a JWKS file: the penalty box spares a remote endpoint (and waits for a
 * key it may publish soon); a file has neither, and holds every key there is, so a kid it lacks is
 * its token's own failure (the 401) at once, every time.
 */
class NoWaitPenaltyBox extends SimplePenaltyBox {
  override async wait(): Promise<void> {}
  override registerFailedAttempt(): void {}
}

function createVerifier() {
  const { auth } = config();
  // A JWKS file and a URI the verifier cannot fetch (not https): the file is the JWKS.
  const file = auth.jwksFile !== undefined && !/^https:/i.test(auth.jwksUri) ? auth.jwksFile : undefined;
  return JwtVerifier.create(
    {
      issuer: requireSetting(auth.issuer, 'AUTH_ISSUER'),
      jwksUri: auth.jwksUri,
      audience: null,
      customJwtCheck: ({ payload }) => {
        if (payload.token_use !== 'access') throw new Error('not an access token');
        if (typeof payload.client_id !== 'string' || payload.client_id === '') throw new Error('no client_id in token');
        // The verifier checks exp only when present; a token that never expires is refused.
        if (!hasExpiry(payload)) throw new Error('no numeric exp in token');
      },
    },
    { jwksCache: new KidAwareJwksCache(file ? { penaltyBox: new NoWaitPenaltyBox(), fetcher: new JwksFileFetcher(file) } : { penaltyBox }) },
  );
}
type Verifier = ReturnType<typeof createVerifier>;
/** Cache of one: the container's token verifier (its JWKS fetched or preloaded once). */
let verifier: Verifier | undefined;

function getVerifier(): Verifier {
  if (verifier) return verifier;
  const v = createVerifier();
  // Locally the JWKS is a file beside the signing key: preload it so verification never fetches.
  const { jwksFile } = config().auth;
  if (jwksFile) v.cacheJwks(JSON.parse(readFileSync(jwksFile, 'utf8')) as Jwks);
  verifier = v;
  return verifier;
}

/**
 * Tokens this container verified, with their expiry. A token's signature, issuer and use cannot
 * change, so the RSA check runs once per token and container rather than on every request; only
 * the expiry is checked again (and the client's existence, by the caller, on every request).
 * Bound: MAX_VERIFIED tokens, the least recently used let go (until 2026-12-07 emptied whole when
 * full: past that many tokens in a container, every token, busy clients' too, was verified again).
 */
export const MAX_VERIFIED = 1000;
const verified = new Lru<string, { claims: AccessClaims; expiresAt: number }>(MAX_VERIFIED);

/**
 * When a verification failed for want of the signing keys, not for anything in the token: the
 * seconds after which a retry may find them; undefined for a failure of the token. The JWKS could
 * not be fetched (Cognito's endpoint unreachable, timed out, not 200) or what it answered is no
 * JWKS: 1; a fetch failed less than its wait ago, so none is made (JwksFetchWaitError): the seconds
 * until that wait ends. The token's kid is not in the cached JWKS and the penalty box forbids fetching it for
 * now (TimedPenaltyBox): the seconds until that wait ends (until 2026-12-07 that was a 401, so a
 * valid token signed with a key rotated in up to 10 s after another token's unknown kid was told
 * it is bad), unless a JWKS fetched since its kid was first asked for lacked it (KidAwareJwksCache:
 * the token's own failure). The token is then neither valid nor invalid; the caller answers a 503
 * to retry, not a 401 telling the client its token is bad.
 */
export function keysRetryAfter(e: unknown): number | undefined {
  if (e instanceof JwksFetchWaitError) return Math.max(1, Math.ceil((e.endsAt - Date.now()) / 1000));
  if (e instanceof FetchError || e instanceof JwksValidationError) return 1;
  if (e instanceof WaitPeriodNotYetEndedJwkError) return Math.max(1, Math.ceil((penaltyBox.endsAt - Date.now()) / 1000));
  return undefined;
}

/** Verifies signature, issuer, expiry (which must be there) and token use; throws on any failure. */
export async function verifyAccessToken(token: string): Promise<AccessClaims> {
  const hit = verified.get(token);
  if (hit) {
    if (Date.now() < hit.expiresAt) return hit.claims;
    verified.delete(token);
  }
  const payload = await getVerifier().verify(token);
  // Checked by the verifier too (customJwtCheck); here as well, whatever the verifier does.
  if (!hasExpiry(payload)) throw new Error('no numeric exp in token');
  const scope = typeof payload.scope === 'string' ? payload.scope : '';
  const claims = { clientId: String(payload.client_id), scopes: scope.split(' ').filter(Boolean) };
  verified.set(token, { claims, expiresAt: payload.exp * 1000 });
  return claims;
}
