import { describe, expect, it } from 'vitest';
import { readonlyPolicy, workspacePolicy } from '../test/policies.js';
import { decide } from '../test/sbpl-decide.js';
import { readSbpl } from '../test/sbpl-reader.js';
import { policyAllowsRead, policyAllowsWrite } from './policy-verdict.js';
import { seatbeltProfile } from './seatbelt-profile.js';

// The whole profile, decided rule by rule (last match wins), against api-reach's reference
// evaluator of the same policy, for thousands of paths built from the names the lists care
// about: reads and writes must agree everywhere. Read only; not run on a Mac.
const SEGMENTS = ['Users', 'ana', 'USERS', 'Ana', 'src', 'app', '.git', 'hooks', 'config', '.env', '.ENV.local', '.env.example', 'node_modules', 'pkg', 'AGENTS.md', '.aalis', 'tmp', 's-7f3a', 'workspace', 'self', 'secrets.yaml', 'Library', 'Caches', 'LaunchAgents', '.ssh', 'id_rsa', '.npm', '_npx', '.vscode', 'tasks.json', 'private', 'var', 'folders', 'x'];

const PREFIXES = [[], ['Users', 'ana'], ['Users', 'ana', 'src', 'app'], ['Users', 'ana', '.aalis', 'tmp', 's-7f3a']];

function* paths(count: number): Generator<string> {
  let seed = 20;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed >>> 12; // the low bits of this generator repeat with a short period
  };
  for (let i = 0; i < count; i++) {
    const depth = 1 + (next() % 7);
    const prefix = PREFIXES[next() % PREFIXES.length]!;
    const tail = Array.from({ length: depth }, () => SEGMENTS[next() % SEGMENTS.length]!);
    yield `/${[...prefix, ...tail].join('/')}`;
  }
}

describe('the profile decides every path as the policy does', () => {
  it.each([
    ['readonly', readonlyPolicy],
    ['workspace', workspacePolicy],
  ] as const)('%s: 1500 generated paths, reads and writes [read only; not run on a Mac]', (_name, policy) => {
    const forms = readSbpl(seatbeltProfile(policy));
    const disagreements: string[] = [];
    const seen = new Set<string>();
    for (const path of paths(1500)) {
      const write = decide(forms, { op: 'file-write-data', path }).action === 'allow';
      const read = decide(forms, { op: 'file-read-data', path }).action === 'allow';
      seen.add(`write ${write}`).add(`read ${read}`);
      if (write !== policyAllowsWrite(policy, path)) disagreements.push(`write ${path}: profile ${write}`);
      if (read !== policyAllowsRead(policy, path)) disagreements.push(`read ${path}: profile ${read}`);
    }
    expect(disagreements).toEqual([]);
    // Not vacuous: both answers occur for both operations.
    expect([...seen].sort()).toEqual(['read false', 'read true', 'write false', 'write true']);
  });
});
