/**
 * How long after the maintenance function's first pass of new code the code before it may still
 * run and write: an invocation begun before the deploy runs up to its function's timeout (at most
 * 15 min for a Lambda function), and the stacks' functions take the new code minutes apart. The
 * one-off migrations (the category index's re-keying, `indexCategoriesInNfc`; the erasure marker
 * scan, `adoptRowlessErasures`) look again, past it, at what they passed before it.
 */
export const OLD_CODE_SETTLE_SECONDS = 900;
