import { describe, expect, it } from 'vitest';
import { checkEnvPattern, envNameMatches, filterSecretEnv, SECRET_ENV_RULES, secretEnvRuleOf } from './secret-env.js';

describe('the sandbox environment filter', () => {
  // name -> the rule that removes it, or null when it is kept.
  const table: [string, string | null][] = [
    ['GITHUB_TOKEN', '*_TOKEN'],
    ['GH_TOKEN', '*_TOKEN'],
    ['GH_HOST', 'GH_*'],
    ['GITHUB_ACTIONS', 'GITHUB_*'],
    ['NPM_TOKEN', '*_TOKEN'],
    ['npm_config__authToken', '*AUTHTOKEN*'],
    ['NPM_CONFIG__AUTH', '*_AUTH'],
    ['DOCKER_AUTH_CONFIG', '*_AUTH_*'],
    ['AWS_SECRET_ACCESS_KEY', '*SECRET*'],
    ['AWS_ACCESS_KEY_ID', 'AWS_*'],
    ['AWS_PROFILE', 'AWS_*'],
    ['OPENAI_API_KEY', '*_KEY'],
    ['OPENAI_BASE_URL', 'OPENAI_*'],
    ['ANTHROPIC_API_KEY', '*_KEY'],
    ['STRIPE_APIKEY', '*APIKEY*'],
    ['GOOGLE_API_KEY_FILE', '*_API_KEY_*'],
    ['SSH_PRIVATE_KEY_PATH', '*PRIVATE_KEY*'],
    ['PGPASSWORD', '*PASSWORD*'],
    ['MYSQL_PWD', null],
    ['DB_PASSWD', '*PASSWD*'],
    ['SMTP_PASS', '*_PASS'],
    ['GPG_PASSPHRASE', '*PASSPHRASE*'],
    ['GOOGLE_APPLICATION_CREDENTIALS', '*CREDENTIAL*'],
    ['AZURE_CLIENT_SECRET', '*SECRET*'],
    ['SESSION_COOKIE', '*COOKIE*'],
    ['SENTRY_DSN', '*_DSN'],
    ['SLACK_WEBHOOK_URL', '*WEBHOOK*'],
    ['DATABASE_URL', '*DATABASE_URL*'],
    ['TOKEN', 'TOKEN'],
    ['CI_JOB_TOKEN', '*_TOKEN'],
    ['AALIS_TOKEN_FILE', 'AALIS_*'],
    ['SSH_AUTH_SOCK', 'SSH_AUTH_SOCK'],
    ['DOCKER_HOST', 'DOCKER_HOST'],
    // Kept: ordinary settings that only look close.
    ['PATH', null],
    ['HOME', null],
    ['LANG', null],
    ['GIT_AUTHOR_NAME', null],
    ['TOKENIZERS_PARALLELISM', null],
    ['KEYBOARD_LAYOUT', null],
    ['EDITOR', null],
    ['SSH_AGENT_PID', null],
    ['PASSENGER', null],
  ];
  it.each(table)('%s -> %s', (name, pattern) => {
    expect(secretEnvRuleOf(name)?.pattern ?? null).toBe(pattern);
  });

  it('gives every rule a reason, and keeps the daemon\'s own variables from any allow list', () => {
    for (const rule of SECRET_ENV_RULES) expect(rule.reason.length).toBeGreaterThan(8);
    const { env, decisions } = filterSecretEnv({ AALIS_TOKEN: 't', GITHUB_TOKEN: 'g', PATH: '/bin' }, { allow: ['AALIS_*', 'GITHUB_TOKEN'], deny: [] });
    expect(env).toEqual({ GITHUB_TOKEN: 'g', PATH: '/bin' });
    expect(decisions).toEqual([
      { name: 'AALIS_TOKEN', removed: true, pattern: 'AALIS_*', reason: expect.stringMatching(/daemon's own/) },
      { name: 'GITHUB_TOKEN', removed: false, pattern: '*_TOKEN', allowedBy: 'GITHUB_TOKEN' },
    ]);
  });

  it('removes what the deny list adds, even if also allowed, and reports names, never values', () => {
    const { env, decisions } = filterSecretEnv({ MY_VENDOR_THING: 'v', OTHER: 'o' }, { allow: ['MY_*'], deny: ['MY_VENDOR_*'] });
    expect(env).toEqual({ OTHER: 'o' });
    expect(JSON.stringify(decisions)).not.toContain('"v"');
    expect(decisions).toEqual([{ name: 'MY_VENDOR_THING', removed: true, pattern: 'MY_VENDOR_*', reason: "listed in the config's deny list" }]);
  });

  const patterns: [string, string, boolean][] = [
    ['*_TOKEN', 'A_TOKEN', true],
    ['*_TOKEN', '_TOKEN', true],
    ['*_TOKEN', 'TOKEN', false],
    ['*SECRET*', 'SECRET', true],
    ['A*B*C', 'ABC', true],
    ['A*B*C', 'AXBXC', true],
    ['A*B*C', 'ACB', false],
    ['AB*BA', 'ABA', false],
    ['gh_*', 'GH_TOKEN', true],
  ];
  it.each(patterns)('pattern %s on %s: %s', (pattern, name, expected) => {
    expect(envNameMatches(pattern, name)).toBe(expected);
  });

  it.each([
    ['GITHUB_TOKEN', undefined],
    ['MY_*', undefined],
    ['*', /every variable/],
    ['A B', /not a variable name/],
    ['A=B', /not a variable name/],
    ['', /not a variable name/],
  ])('checks the allow-list pattern %j', (pattern, expected) => {
    const problem = checkEnvPattern(pattern);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });
});
