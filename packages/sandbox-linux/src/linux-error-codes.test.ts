import { AalisError } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { CommitConflict } from './commit-conflicts.js';
import { DaemonTmpVisibleError } from './daemon-tmp.js';
import { HostWalkError } from './host-thread.js';
import { LINUX_ERROR_CODES } from './linux-error-codes.js';
import { LoopbackFilterError } from './loopback-filter.js';
import { OverlayRequiredError } from './overlay-run.js';
import { PidLimitError } from './pid-limit.js';
import { MoveFailedError } from './safe-move.js';
import { ScanLimitError } from './scan.js';
import { SeccompBuildError } from './seccomp.js';
import { UntranslatableError } from './translate.js';

describe('the Linux backend errors', () => {
  it.each([
    ['daemon-tmp-visible', new DaemonTmpVisibleError('/var/aalis', '/var/aalis/ws'), true],
    ['seccomp-build', new SeccompBuildError('jump of 300 out of range'), false],
    ['loopback-filter', new LoopbackFilterError('nft failed'), true],
    ['untranslatable', new UntranslatableError('"x" is not an absolute, normalised real path'), false],
    ['overlay-required', new OverlayRequiredError('no overlayfs', 'use hostModel look'), true],
    ['pid-limit', new PidLimitError('no cgroup', 'set pidLimit to 0'), true],
    ['commit-conflict', new CommitConflict('/w/a.txt'), false],
    ['host-walk', new HostWalkError('HostWalkError', 'the host walk thread stopped'), false],
    ['scan-limit', new ScanLimitError('/home/u', 1000), false],
    ['move-failed', new MoveFailedError('x could not be moved across file systems'), false],
  ] as const)('%s extends AalisError with its code, and a fix where the user has one', (code, error, hasFix) => {
    expect(error).toBeInstanceOf(AalisError);
    expect(LINUX_ERROR_CODES).toContain(code);
    expect(error.code).toBe(code);
    expect(error.toJSON()).toEqual({ code, message: error.message, ...(hasFix ? { fix: expect.any(String) } : {}) });
  });

  it("a host walk error keeps the code the thread's error had", () => {
    expect(new HostWalkError('SafeFileError', '/w: refused', 'final-symlink').code).toBe('final-symlink');
  });
});
