import { describe, expect, it } from 'vitest';
import { describeRequest } from './messages.js';

// The one-line summary an ask carries: a newline in a path read as a space there, so
// `safe.txt\n/root/.bashrc` looked like two paths (found by an attack on the console's card).
describe('describeRequest', () => {
  it.each([
    [{ effect: 'write', path: '/w/safe.txt\n/root/.bashrc' }, 'writing /w/safe.txt\\n/root/.bashrc'],
    [{ effect: 'read', path: '/w/a\tb' }, 'reading /w/a\\tb'],
    [{ effect: 'write', path: '/w/d\n', toMake: '/w/d\n/x' }, expect.stringMatching(/^writing in \/w\/d\\n, to make \/w\/d\\n\/x there/)],
    [{ effect: 'write', path: '/w/plain.txt' }, 'writing /w/plain.txt'],
  ] as const)('%j', (request, text) => {
    expect(describeRequest(request as Parameters<typeof describeRequest>[0])).toEqual(text);
  });
});
