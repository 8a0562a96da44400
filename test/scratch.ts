/*
 * Where tests make folders that must stay visible inside a sandbox, whose /tmp is private: this
 * test run's own folder under /var/tmp (made by vitest.config.ts through test-tmp.ts, and removed
 * with whatever tests left in it when the run ends), or /var/tmp itself outside a test run (the
 * benchmarks), or the temp directory on a host without /var/tmp.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** The parent of the tests' folders that a sandbox must see (see above). */
export const TEST_SCRATCH = process.env.AALIS_TEST_SCRATCH ?? (existsSync('/var/tmp') ? '/var/tmp' : tmpdir());
