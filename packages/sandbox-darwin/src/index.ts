export { DarwinProfileError } from './darwin-profile-error.js';
export { darwinPath } from './darwin-path.js';
export { PROFILE_LAYERS, type ProfileLayer } from './profile-layers.js';
export { SandboxPolicySchema, parseSandboxPolicy } from './sandbox-policy-schema.js';
export { type PathReach, type SbplFilter, matcherFilter, pathFilter, renderFilter, ruleFilter } from './sbpl-filter.js';
export { literalRegex, translatePattern } from './sbpl-regex.js';
export { sbplString } from './sbpl-string.js';
export { PROFILE_PREAMBLE, seatbeltProfile } from './seatbelt-profile.js';
