import { describe, expect, it } from 'vitest';
import { engineMissing } from '../test/engine.js';

// In CI a missing engine fails here instead of every real-engine test skipping silently.
describe.runIf(process.env.CI === 'true')('the Docker Engine in CI', () => {
  it('answers and has the test image', () => {
    expect(engineMissing).toBeUndefined();
  });
});
