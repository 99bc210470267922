/**
 * Search's settings: those of the environment read and validated in shared/config.ts (named
 * there), plus fixed ones. An object, read at import, that tests may change at run time.
 */
import { config } from '../config.ts';

const { pointerCheckMs, deltaTtlMs, readWaitMs, rebuildAfterChanges, maxIndexAgeSeconds, pinnedTtlMs, retainSeconds, memoryBytes } = config().search;

export const SEARCH_SETTINGS = {
  /** How often a container looks for a newer index artifact (INDEX_CHECK_SECONDS). */
  pointerCheckMs,
  /**
   * How long a container may reuse the delta it read (SEARCH_DELTA_TTL_MS). 0 (default): every
   * search reads the changes since the build, so a deactivated or deleted item is gone from the
   * very next search.
   */
  deltaTtlMs,
  /**
   * The longest a search waits for its container's read of the changes since the build
   * (SEARCH_READ_WAIT_MS): a read that takes longer (a first read of a bulk import no build holds
   * yet) goes on, and the search is served from the build and the changes applied so far (up to
   * a time: they are applied in order of time), its page's hits checked against the table. Every
   * read of a few changes ends well within it. Recommendations wait for the whole read.
   */
  readWaitMs,
  /** Above this many changes since the build, the maintenance sweep requests a rebuild (INDEX_REBUILD_AFTER_CHANGES). */
  rebuildAfterChanges,
  /** Changes older than this are folded into a new index by the sweep (INDEX_MAX_AGE_SECONDS). */
  maxIndexAgeSeconds,
  /** Changes read per page when bringing the delta up to date (it pages on until complete). */
  deltaPage: 5000,
  /**
   * Changes of a page applied to the delta at once, the thread's other requests served between
   * (10-20 ms of work: 0.1-0.2 ms a changed item at 512 dimensions, measured in-process).
   */
  applyChunk: 100,
  /**
   * Ranges of time a container's first read of the changes since a build reads at once (a
   * bulk import not built yet is a whole catalog): one range's pages are answered while
   * another's are applied.
   */
  firstReadRanges: 4,
  /** Clock skew allowance when reading changes since the build. */
  skewSeconds: 2,
  /**
   * How long a container keeps the index build a cursor was ranked on once a newer build serves
   * (since the last page that asked for it): later pages of that result list rank on it too
   * (SEARCH_CURSOR_PIN_SECONDS).
   */
  pinnedTtlMs,
  /**
   * How long a replaced build's artifact stays stored (for cursors ranked on it); the next build
   * after that deletes it, so storage holds a few builds, not one per rebuild forever
   * (INDEX_RETAIN_SECONDS).
   */
  retainSeconds,
  /**
   * The most memory, as estimated, a container keeps tenants' search views in; past it the least
   * recently served tenants' views are let go (SEARCH_MEMORY_MB; default half the Lambda function's memory, elsewhere half of V8's heap limit).
   */
  memoryBytes,
};
