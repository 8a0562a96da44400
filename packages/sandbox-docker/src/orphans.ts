import { LABELS } from './labels.js';
import { currentOwner, type OwnerIdentity, ownerStateOf } from './owner.js';

/** How long past its deadline a container still counts as maybe running (an engine slow to kill it). */
export const DEADLINE_SLACK_MS = 30_000;

/** The `docker ps --format` whose lines {@link orphansIn} reads: the id, a tab, the labels as JSON. */
export const REAP_FORMAT = '{{.ID}}\t{{json .Labels}}';

/** `{{json .Labels}}` of `docker ps`: a comma-joined `k=v` string on engine 20.10, an object elsewhere. */
function labelsOf(json: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof parsed === 'object' && parsed !== null) return parsed as Record<string, string>;
  if (typeof parsed !== 'string') return undefined;
  const labels: Record<string, string> = {};
  for (const pair of parsed.split(',')) {
    const eq = pair.indexOf('=');
    if (eq > 0) labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

/**
 * The ids, in `docker ps` output of {@link REAP_FORMAT}, of containers that are orphans for the
 * process run `runId`: of another run, and either their owner is provably dead (see
 * `ownerStateOf`) or their own deadline passed {@link DEADLINE_SLACK_MS} ago.
 */
export function orphansIn(psOutput: string, runId: string, now = Date.now(), here: OwnerIdentity = currentOwner()): string[] {
  const orphans: string[] = [];
  for (const line of psOutput.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const labels = labelsOf(line.slice(tab + 1));
    if (labels === undefined || labels[LABELS.run] === runId) continue;
    const deadline = Number(labels[LABELS.deadline]);
    const pastDeadline = Number.isFinite(deadline) && deadline > 0 && now > deadline + DEADLINE_SLACK_MS;
    if (pastDeadline || ownerStateOf(labels, here) === 'dead') orphans.push(line.slice(0, tab));
  }
  return orphans;
}
