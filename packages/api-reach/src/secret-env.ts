/**
 * One rule of the sandbox's environment filter: names matching `pattern` (`*` is any run of
 * characters, compared without regard to case) are removed from a sandboxed command's
 * environment. `allowable: false` rules cannot be lifted by an allow list.
 */
export interface SecretEnvRule {
  readonly pattern: string;
  /** Why such a variable is kept from the command. */
  readonly reason: string;
  readonly allowable: boolean;
}

/**
 * The variables a sandboxed command does not get, by name, with the reason for each. Names are
 * matched without regard to case (tools read `npm_config__authtoken` as readily as the upper
 * case). The list errs on the side of removing: a harmless variable caught here is one line in
 * the allow list, a credential missed is a leak.
 */
export const SECRET_ENV_RULES: readonly SecretEnvRule[] = [
  { pattern: 'AALIS_*', reason: "the daemon's own settings and secrets (its token, its data directory)", allowable: false },
  { pattern: 'SSH_AUTH_SOCK', reason: "the owner's SSH agent: whoever reaches it signs as the owner", allowable: true },
  { pattern: 'GPG_AGENT_INFO', reason: "the owner's GPG agent: it signs and decrypts as the owner", allowable: true },
  { pattern: 'TOKEN', reason: 'an access token', allowable: true },
  { pattern: '*_TOKEN', reason: 'an access token (GITHUB_TOKEN, NPM_TOKEN, HF_TOKEN, CI_JOB_TOKEN, …)', allowable: true },
  { pattern: '*_TOKEN_*', reason: 'an access token or its parts (…_TOKEN_ID, …_TOKEN_SECRET)', allowable: true },
  { pattern: '*AUTHTOKEN*', reason: "a registry's auth token (npm_config__authToken, …)", allowable: true },
  { pattern: '*_AUTH', reason: "a registry's or service's credentials (NPM_CONFIG__AUTH, …)", allowable: true },
  { pattern: '*_AUTH_*', reason: 'credentials or their parts (DOCKER_AUTH_CONFIG, …)', allowable: true },
  { pattern: '*SECRET*', reason: 'a secret by name (AWS_SECRET_ACCESS_KEY, CLIENT_SECRET, JWT_SECRET, …)', allowable: true },
  { pattern: '*_KEY', reason: 'an API or signing key (OPENAI_API_KEY, STRIPE_KEY, …)', allowable: true },
  { pattern: '*APIKEY*', reason: 'an API key written as one word', allowable: true },
  { pattern: '*_API_KEY_*', reason: 'an API key or its parts', allowable: true },
  { pattern: '*PRIVATE_KEY*', reason: 'a private key or the path to one', allowable: true },
  { pattern: '*PASSWORD*', reason: 'a password by name', allowable: true },
  { pattern: '*PASSWD*', reason: 'a password by name', allowable: true },
  { pattern: '*_PASS', reason: 'a password (DB_PASS, SMTP_PASS, …)', allowable: true },
  { pattern: '*PASSPHRASE*', reason: 'a passphrase', allowable: true },
  { pattern: '*CREDENTIAL*', reason: 'credentials or the file holding them (GOOGLE_APPLICATION_CREDENTIALS, …)', allowable: true },
  { pattern: '*COOKIE*', reason: 'a session cookie', allowable: true },
  { pattern: '*WEBHOOK*', reason: 'a webhook URL: posting to it needs no other credential (SLACK_WEBHOOK_URL, …)', allowable: true },
  { pattern: '*_DSN', reason: 'a connection string, which carries its password (SENTRY_DSN, …)', allowable: true },
  { pattern: '*DATABASE_URL*', reason: 'a database URL, which carries its password', allowable: true },
  { pattern: 'AWS_*', reason: 'AWS credentials and the profile that selects them', allowable: true },
  { pattern: 'GH_*', reason: "GitHub CLI's tokens and host settings", allowable: true },
  { pattern: 'GITHUB_*', reason: 'GitHub tokens and the context of a CI job', allowable: true },
  { pattern: 'NPM_TOKEN', reason: 'the npm registry token', allowable: true },
  { pattern: 'OPENAI_*', reason: "a model provider's key and endpoint (the agent's own)", allowable: true },
  { pattern: 'ANTHROPIC_*', reason: "a model provider's key and endpoint (the agent's own)", allowable: true },
  { pattern: 'DOCKER_HOST', reason: 'the Docker engine, which is root on its host', allowable: true },
];

/** Why a pattern of an allow or deny list is not accepted, or `undefined` when it is. */
export function checkEnvPattern(pattern: string): string | undefined {
  if (!/^[A-Za-z0-9_*]+$/.test(pattern)) return `'${pattern}' is not a variable name or pattern: use letters, digits, '_' and '*' (any run of characters)`;
  if (/^\*+$/.test(pattern)) return `'${pattern}' would match every variable; name the variables to allow or deny`;
  return undefined;
}

/** Whether `name` matches `pattern` (`*` is any run of characters; case is not compared). */
export function envNameMatches(pattern: string, name: string): boolean {
  const parts = pattern.toUpperCase().split('*');
  const upper = name.toUpperCase();
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (parts.length === 1) return upper === first;
  if (!upper.startsWith(first) || upper.length < first.length + last.length || !upper.endsWith(last)) return false;
  let at = first.length;
  const end = upper.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = upper.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** What the owner's config adds to the filter: names let through, and names removed too. */
export interface SecretEnvConfig {
  /** Names or patterns let through although a rule matches them (not `allowable: false` ones). */
  readonly allow: readonly string[];
  /** Names or patterns removed besides {@link SECRET_ENV_RULES}. */
  readonly deny: readonly string[];
}

/** What the filter decided for one variable it removed or let through against a rule. */
export type SecretEnvDecision =
  | { readonly name: string; readonly removed: true; readonly pattern: string; readonly reason: string }
  | { readonly name: string; readonly removed: false; readonly pattern: string; readonly allowedBy: string };

/** A filtered environment and what was decided on the way (names only, never values). */
export interface SecretEnvResult {
  readonly env: Record<string, string>;
  readonly decisions: readonly SecretEnvDecision[];
}

/** The first rule matching `name`: the config's deny list first, then {@link SECRET_ENV_RULES}. */
export function secretEnvRuleOf(name: string, config: SecretEnvConfig = { allow: [], deny: [] }): SecretEnvRule | undefined {
  const denied = config.deny.find((p) => envNameMatches(p, name));
  if (denied !== undefined) return { pattern: denied, reason: "listed in the config's deny list", allowable: false };
  return SECRET_ENV_RULES.find((rule) => envNameMatches(rule.pattern, name));
}

/**
 * The environment a sandboxed command gets: `env` without the variables a rule matches, unless
 * the config allows them (never the rules marked not allowable, nor the config's own deny
 * list). Pure; the values are copied, never logged.
 */
export function filterSecretEnv(env: Readonly<Record<string, string>>, config: SecretEnvConfig = { allow: [], deny: [] }): SecretEnvResult {
  const out: Record<string, string> = {};
  const decisions: SecretEnvDecision[] = [];
  for (const [name, value] of Object.entries(env)) {
    const rule = secretEnvRuleOf(name, config);
    if (!rule) {
      out[name] = value;
      continue;
    }
    const allowedBy = rule.allowable ? config.allow.find((p) => envNameMatches(p, name)) : undefined;
    if (allowedBy !== undefined) {
      out[name] = value;
      decisions.push({ name, removed: false, pattern: rule.pattern, allowedBy });
    } else {
      decisions.push({ name, removed: true, pattern: rule.pattern, reason: rule.reason });
    }
  }
  return { env: out, decisions };
}
