import { describe, expect, it } from 'vitest';
import { AalisError, errorEnvelope, errorJsonOf, errorText, readErrorEnvelope } from './aalis-error.js';
import { KernelError } from './errors.js';
import { SafeFileError } from './safe-file-error.js';
import { ToolError } from './tools.js';

describe('AalisError', () => {
  it('carries a code, the message, an optional fix and cause, and names its own class', () => {
    const cause = new Error('EACCES');
    const error = new AalisError('some-rule', 'refused', { fix: 'do this', cause });
    expect(error).toBeInstanceOf(Error);
    expect({ name: error.name, code: error.code, message: error.message, fix: error.fix, cause: error.cause }).toEqual({ name: 'AalisError', code: 'some-rule', message: 'refused', fix: 'do this', cause });
    class LocalError extends AalisError<'x'> {}
    expect(new LocalError('x', 'm').name).toBe('LocalError');
  });

  it('toJSON has the code, message and fix, never the stack or the cause', () => {
    const error = new AalisError('c', 'm', { fix: 'f', cause: new Error('secret detail') });
    expect(JSON.parse(JSON.stringify(error))).toEqual({ code: 'c', message: 'm', fix: 'f' });
    expect(new AalisError('c', 'm').toJSON()).toEqual({ code: 'c', message: 'm' });
  });

  it.each([
    ['kernel', new KernelError('dependency-cycle', 'a -> b -> a'), { code: 'dependency-cycle', message: 'a -> b -> a' }],
    ['tool', new ToolError('denied', 'no'), { code: 'denied', message: 'no' }],
    ['safe file', new SafeFileError('final-symlink', '/x', 'a link', 'remove it'), { code: 'final-symlink', message: expect.stringContaining('/x: refused'), fix: 'remove it' }],
  ])('the %s error extends the base and keeps its code', (_, error, json) => {
    expect(error).toBeInstanceOf(AalisError);
    expect(error.toJSON()).toEqual(json);
  });

  it('builds the one error envelope from anything thrown, and reads it back', () => {
    expect(errorEnvelope(new KernelError('not-provided', 'no sandbox'))).toEqual({ error: { code: 'not-provided', message: 'no sandbox' } });
    expect(errorEnvelope(new TypeError('x is not iterable'))).toEqual({ error: { code: 'internal', message: 'x is not iterable' } });
    expect(errorJsonOf('text', 'failed')).toEqual({ code: 'failed', message: 'text' });
    const back = readErrorEnvelope(JSON.parse(JSON.stringify(errorEnvelope(new AalisError('c', 'm', { fix: 'f' })))));
    expect(back).toEqual({ code: 'c', message: 'm', fix: 'f' });
    expect(readErrorEnvelope({ error: { kind: 'old', message: 'm' } })).toBeUndefined();
    expect(readErrorEnvelope('not json')).toBeUndefined();
  });

  it('the command-line text adds the fix on its own line unless the message has it', () => {
    expect(errorText(new AalisError('c', 'refused', { fix: 'pass --x' }))).toBe('refused\nfix: pass --x');
    expect(errorText(new AalisError('c', 'refused. Fix: pass --x', { fix: 'pass --x' }))).toBe('refused. Fix: pass --x');
    expect(errorText(new Error('plain'))).toBe('plain');
  });
});
