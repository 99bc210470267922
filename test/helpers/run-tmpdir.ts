import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest's global setup: the run's temporary files in a folder of its own, removed when the run
 * ends (passed or not). Everything a test makes with `tmpdir()` goes there, and so do the CDK's
 * cloud assemblies (an `App` without an outdir synthesises into a new `cdk.out*` folder of the
 * temporary directory, 25 MB each with the console's assets: about 300 MB a run that nothing
 * removed) and what the servers a test spawns write under it. The workers are forked after this
 * runs, so they inherit TMPDIR.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'recsearch-tests-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
