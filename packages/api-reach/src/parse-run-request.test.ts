import { describe, expect, it } from 'vitest';
import { PROJECT, reachInput } from '../test/fixture.js';
import { parseRunRequest, parseSandboxCommand, SandboxRequestError } from './parse-run-request.js';
import { resolveReach } from './reach.js';
import { MAX_TIMEOUT_MS } from './run-request.js';
import { SandboxUnavailableError } from './sandbox.js';
import { sandboxPolicyOf } from './sandbox-policy-of.js';

const policy = sandboxPolicyOf(resolveReach(reachInput('owner', 'workspace', 'ask', { place: { home: PROJECT } })));
const request = { argv: ['/bin/echo', 'hi'], cwd: PROJECT, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 5_000, policy };

/** A request with one field changed, or removed when the value is `undefined`. */
function withField(key: string, value: unknown, within: Record<string, unknown> = request): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...within };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}
const withPolicy = (key: string, value: unknown) => withField('policy', withField(key, value, policy as unknown as Record<string, unknown>));

describe('parseRunRequest', () => {
  it('passes a request built from sandboxPolicyOf, unchanged', () => {
    const signal = new AbortController().signal;
    const stdin = new Uint8Array([1, 2]);
    expect(parseRunRequest('linux', { ...request, signal, stdin, maxOutputBytes: 10 })).toEqual({ ...request, signal, stdin, maxOutputBytes: 10 });
    expect(parseRunRequest('linux', withField('timeoutMs', MAX_TIMEOUT_MS)).timeoutMs).toBe(MAX_TIMEOUT_MS);
  });

  it.each([
    ['an argument with NUL', withField('argv', ['/bin/echo', 'a\0b']), 'argv[1]', /NUL byte/],
    ['an empty program', withField('argv', ['']), 'argv[0]', /is empty/],
    ['no argv at all', withField('argv', []), 'argv[0]', /is missing/],
    ['an argv given as a shell string', withField('argv', 'echo hi'), 'argv', /expected tuple/],
    ['a relative cwd', withField('cwd', 'src'), 'cwd', /not an absolute path/],
    ['a cwd with ..', withField('cwd', `${PROJECT}/../etc`), 'cwd', /not a resolved path/],
    ['a variable name with =', withField('env', { 'A=B': 'x' }), 'env.A=B', /empty or contains "="/],
    ['a variable value with NUL', withField('env', { A: 'x\0y' }), 'env.A', /NUL byte/],
    ['a variable named __proto__ (zod would drop it silently)', withField('env', JSON.parse('{"__proto__":"x","A":"1"}')), 'env', /__proto__/],
    ['a 10-day timeout', withField('timeoutMs', 10 * 24 * 60 * 60 * 1000), 'timeoutMs', /over the maximum of 86400000 ms/],
    ['a zero timeout', withField('timeoutMs', 0), 'timeoutMs', /Too small/],
    ['a fractional timeout', withField('timeoutMs', 1.5), 'timeoutMs', /expected int/],
    ['no timeout', withField('timeoutMs', undefined), 'timeoutMs', /is missing/],
    ['a negative output limit', withField('maxOutputBytes', -1), 'maxOutputBytes', /Too small/],
    ['an unknown request field', withField('timeout', 5), 'timeout', /not a field of the contract/],
    ['no policy', withField('policy', undefined), 'policy', /is missing/],
    ['a policy without controlDeny', withPolicy('controlDeny', undefined), 'policy.controlDeny', /is missing/],
    ['an unknown policy field', withPolicy('readAllow', ['/']), 'policy.readAllow', /not a field of the contract/],
    ['a relative writable root', withPolicy('write', ['src']), 'policy.write[0]', /not an absolute path/],
    ['an unknown rule field', withPolicy('writeDeny', [{ path: '/a', glob: '*' }]), 'policy.writeDeny[0].glob', /not a field of the contract/],
    ['a relative except', withPolicy('writeDeny', [{ path: '/a', except: [{ path: 'rel' }] }]), 'policy.writeDeny[0].except[0].path', /not an absolute path/],
    ['a pattern outside the subset', withPolicy('readDeny', [{ pattern: '\\d+' }]), 'policy.readDeny[0].pattern', /escape \\d/],
    ['a port out of range', withPolicy('localPorts', [70000]), 'policy.localPorts[0]', /65535/],
    ['a network that is neither on nor off', withPolicy('network', 'maybe'), 'policy.network', /"off"\|"on"/],
    ['a session temp with NUL', withPolicy('tmp', '/tmp/a\0b'), 'policy.tmp', /NUL byte/],
    ['not an object', 'run this', 'the run request', /expected object/],
  ])('refuses %s, naming the field and what to do', (_what, input, field, problem) => {
    let caught: unknown;
    try {
      parseRunRequest('docker', input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SandboxRequestError);
    expect(caught).toBeInstanceOf(SandboxUnavailableError);
    const error = caught as SandboxRequestError;
    expect(error.field).toBe(field);
    expect(error.problem).toMatch(problem);
    expect(error.backend).toBe('docker');
    expect(error.fix.length).toBeGreaterThan(20);
    expect(error.message).toContain(`the docker sandbox cannot run this command: the run request is invalid: ${field} `);
    expect(error.toJSON()).toEqual({ code: 'invalid-run-request', message: error.message, fix: error.fix });
  });

  it('says what to do by the field that is wrong', () => {
    const fixOf = (input: unknown) => {
      try {
        parseRunRequest('linux', input);
      } catch (error) {
        return (error as SandboxRequestError).fix;
      }
      throw new Error('the request passed');
    };
    expect(fixOf(withPolicy('controlDeny', undefined))).toMatch(/sandboxPolicyOf/);
    expect(fixOf(withField('timeoutMs', MAX_TIMEOUT_MS + 1))).toMatch(/from 1 to 86400000/);
    expect(fixOf(withField('argv', ['/bin/echo', '\0']))).toMatch(/separate strings/);
    expect(fixOf(withField('extra', 1))).toMatch(/and no others/);
  });
});

describe('parseSandboxCommand', () => {
  it('takes a command without cwd and policy, and refuses them like a run request', () => {
    expect(parseSandboxCommand('docker', { argv: ['/bin/true'], timeoutMs: 1_000 })).toEqual({ argv: ['/bin/true'], timeoutMs: 1_000 });
    expect(() => parseSandboxCommand('docker', { argv: ['/bin/true', 'a\0'], timeoutMs: 1_000 })).toThrow(/argv\[1\] contains a NUL byte/);
    expect(() => parseSandboxCommand('docker', { argv: ['/bin/true'], timeoutMs: 1_000, policy })).toThrow(/policy is not a field/);
  });
});

describe('parseRunRequest with a policy it checked before', () => {
  const deepFreeze = <T>(value: T): T => {
    if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) deepFreeze(inner);
      Object.freeze(value);
    }
    return value;
  };
  const frozen = () => deepFreeze(structuredClone(policy));

  it('checks a policy that is frozen data once: the same object gives the same checked policy, the rest of each request still checked', () => {
    const kept = frozen();
    const first = parseRunRequest('linux', { ...request, policy: kept });
    const second = parseRunRequest('linux', { ...request, argv: ['/bin/true'], policy: kept });
    expect(second.policy).toBe(first.policy);
    expect(second.argv).toEqual(['/bin/true']);
    expect(Object.isFrozen(second)).toBe(true);
    // a wrong field beside a checked policy is refused as before, naming it
    expect(() => parseRunRequest('linux', { ...request, argv: ['/bin/echo', 'a\0b'], policy: kept })).toThrow(/argv\[1\]/);
    expect(() => parseRunRequest('linux', { ...request, policy: kept, extra: 1 })).toThrow(/extra is not a field of the contract/);
  });

  it.each([
    ['not frozen, and changed after its first check', () => {
      const open = structuredClone(policy) as unknown as { write: string[] };
      parseRunRequest('linux', { ...request, policy: open });
      open.write.push('relative/path');
      return open;
    }],
    ['frozen, with a getter that answers differently the second time', () => {
      let reads = 0;
      const tricky = deepFreeze(Object.defineProperty({ ...structuredClone(policy) }, 'tmp', { enumerable: true, get: () => (reads++ === 0 ? PROJECT : 'relative/tmp') }));
      parseRunRequest('linux', { ...request, policy: tricky });
      return tricky;
    }],
    ['frozen at the top only, an inner list changed after its first check', () => {
      const shallow = Object.freeze({ ...structuredClone(policy), write: [PROJECT] });
      parseRunRequest('linux', { ...request, policy: shallow });
      (shallow.write as string[]).push('relative/path');
      return shallow;
    }],
  ])('checks again a policy that could change (%s), and refuses what changed', (_, changed) => {
    expect(() => parseRunRequest('linux', { ...request, policy: changed() })).toThrow(SandboxRequestError);
  });
});
