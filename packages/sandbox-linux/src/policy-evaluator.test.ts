import { describe, expect, it } from 'vitest';
import type { SandboxPolicy } from '@aalis/api-reach';
import { EVALUATOR_ANSWERS_KEPT, PolicyEvaluator, policyEvaluatorOf } from './policy-evaluator.js';

const policy: SandboxPolicy = {
  readDeny: [{ path: '/home/u/.ssh' }, { pattern: '^(?:.*/)?\\.env(?:\\..*)?$' }],
  readAllowWithin: ['/home/u/.ssh/public'],
  write: ['/ws'],
  writeDeny: [{ path: '/ws/.git/hooks' }],
  writeExceptions: [{ path: '/ws/.git/hooks/allowed' }],
  controlDeny: [{ path: '/ws/.aalis' }],
  network: 'off',
  localPorts: [],
  unixSockets: [],
};

// every layer, later ones winning: the table the evaluator's answers must keep, asked once and again
const TABLE: readonly [path: string, state: 'hidden' | 'ro' | 'rw'][] = [
  ['/usr/bin/sh', 'ro'],
  ['/home/u/.ssh/id_ed25519', 'hidden'],
  ['/home/u/.ssh/public/key.pub', 'ro'],
  ['/ws/src/a.ts', 'rw'],
  ['/ws/.env', 'hidden'],
  ['/ws/deep/dir/.env.local', 'hidden'],
  ['/ws/.git/hooks/pre-commit', 'ro'],
  ['/ws/.git/hooks/allowed/x', 'rw'],
  ['/ws/.aalis/state', 'ro'],
  ['/elsewhere/file', 'ro'],
];

describe('PolicyEvaluator', () => {
  it.each(TABLE)('%s is %s, and the same when asked again (the kept answer)', (path, state) => {
    const ev = new PolicyEvaluator(policy);
    expect(ev.entry(path)).toBe(state);
    expect(ev.entry(path)).toBe(state);
    // a fresh evaluator of an equal policy agrees with the one that kept its answers
    expect(new PolicyEvaluator(structuredClone(policy)).entry(path)).toBe(state);
  });

  it('keeps at most EVALUATOR_ANSWERS_KEPT answers of a kind, and answers right after it let them go', () => {
    const ev = policyEvaluatorOf(structuredClone(policy));
    expect(ev.writable('/ws/src/a.ts')).toBe(true);
    // a walk of many entries, as a commit of a large tree asks
    for (let i = 0; i < EVALUATOR_ANSWERS_KEPT + 100; i++) {
      expect(ev.writable(`/ws/gen/${i}`)).toBe(true);
      expect(ev.hidden(`/ws/gen/${i}/.env`)).toBe(true);
    }
    const kept = ev as unknown as { hiddenAnswers: Map<string, boolean>; writableAnswers: Map<string, boolean> };
    expect(kept.writableAnswers.size).toBeLessThanOrEqual(EVALUATOR_ANSWERS_KEPT);
    expect(kept.hiddenAnswers.size).toBeLessThanOrEqual(EVALUATOR_ANSWERS_KEPT);
    for (const [path, state] of TABLE) expect(ev.entry(path)).toBe(state);
  });
});
