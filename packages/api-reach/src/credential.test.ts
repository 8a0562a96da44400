import { describe, expect, it } from 'vitest';
import { isReachCredential, REACH_CREDENTIAL } from './credential.js';
import { reach } from './service.js';

function credential(): object {
  const c = {
    exec: 'sandbox',
    home: '/home/a/proj',
    require: async () => ({ allowed: true }),
    allows: () => true,
    sandboxPolicy: () => {
      throw new Error('unused');
    },
    processEnv: async () => ({}),
  };
  Object.defineProperty(c, REACH_CREDENTIAL, { value: true, enumerable: false });
  return c;
}

describe('the credential brand', () => {
  it('is the registered symbol, so two copies of the package agree', () => {
    expect(REACH_CREDENTIAL).toBe(Symbol.for('@aalis/api-reach/credential'));
  });

  it('recognises a branded credential', () => {
    expect(isReachCredential(credential())).toBe(true);
  });

  it('a spread or Object.assign copy is not a credential', () => {
    const c = credential();
    expect(isReachCredential({ ...c })).toBe(false);
    expect(isReachCredential(Object.assign({}, c))).toBe(false);
    expect(Object.getOwnPropertySymbols({ ...c })).toEqual([]);
  });

  it('neither is an inherited brand, an enumerable brand, a false brand or a look-alike', () => {
    expect(isReachCredential(Object.create(credential()))).toBe(false);
    const enumerable = { ...credential(), [REACH_CREDENTIAL]: true };
    expect(isReachCredential(enumerable)).toBe(false);
    const falseBrand = { ...credential() };
    Object.defineProperty(falseBrand, REACH_CREDENTIAL, { value: 'yes', enumerable: false });
    expect(isReachCredential(falseBrand)).toBe(false);
    const noMethods = {};
    Object.defineProperty(noMethods, REACH_CREDENTIAL, { value: true, enumerable: false });
    expect(isReachCredential(noMethods)).toBe(false);
    const badExec = { ...credential(), exec: 'root' };
    Object.defineProperty(badExec, REACH_CREDENTIAL, { value: true, enumerable: false });
    expect(isReachCredential(badExec)).toBe(false);
  });

  it.each([null, undefined, 1, 'credential', true])('%s is not a credential', (value) => {
    expect(isReachCredential(value)).toBe(false);
  });
});

describe('the reach service descriptor', () => {
  it('is named reach', () => {
    expect(reach).toEqual({ kind: 'service', name: 'reach' });
  });
});
