/**
 * What a one-time page code's sealed secret is bound to, with the page it is for and the code's
 * id (NUL-separated): the cli daemon's console codes seal with it (console-codes.ts), the pages
 * open with it.
 */
export const PAGE_CODE_LABEL = 'aalis-page-code';

/** The pages a one-time code opens: the console (its secret the daemon's token) and the Isolation Pod's panel (a pod capability). */
export const PAGE_CODE_KINDS = ['console', 'pod'] as const;
/** One of {@link PAGE_CODE_KINDS}. */
export type PageCodeKind = (typeof PAGE_CODE_KINDS)[number];

/**
 * The source of the daemon's pages' side of a one-time code (the console, the pod's panel: plain
 * ES2020 in their inline scripts, so it is text here). `pageCode(hash)` finds `code=<id>.<key>` in
 * an address's fragment (null when there is none); `claimPageCode(code, kind, again)` sends the id
 * and the page it is on (one of {@link PAGE_CODE_KINDS}) to `POST /api/console/claim` and opens
 * the secret sealed under the key (AES-256-GCM, bound to {@link PAGE_CODE_LABEL}, the page and the
 * id), which never leaves the page; it resolves to `{ secret, keep }` (`keep`: whether the page
 * may keep it in the tab's storage). It throws with what
 * went wrong and `again` (what the person can do), and checks for WebCrypto before it claims:
 * without it (a page that is no secure context, http://0.0.0.0) the code would be spent and not
 * opened.
 */
export const PAGE_CODE_SCRIPT = String.raw`
function bytesOfBase64(text) {
  const plain = text.replace(/-/g, '+').replace(/_/g, '/');
  return Uint8Array.from(atob(plain + '='.repeat((4 - (plain.length % 4)) % 4)), (c) => c.charCodeAt(0));
}
function pageCode(hash) {
  const match = /(?:^#|&)code=([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})(?:&|$)/.exec(hash);
  return match ? { id: match[1], key: match[2] } : null;
}
async function claimPageCode(code, kind, again) {
  if (!window.isSecureContext || !window.crypto || !crypto.subtle) {
    throw new Error('this page cannot open the code here: the browser gives no WebCrypto at ' + location.origin + ' (not a secure context). The code was not spent; open the address at http://127.0.0.1:' + location.port + ' instead, or ' + again + '.');
  }
  const res = await fetch('/api/console/claim', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: code.id, for: kind }) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const e = data.error || {};
    // a code of the other page (409) names where it opens; else what this page's person can do
    throw new Error((e.message || 'the server answered ' + res.status) + ' To go on: ' + (res.status === 409 && e.fix ? e.fix : again) + '.');
  }
  try {
    const key = await crypto.subtle.importKey('raw', bytesOfBase64(code.key), { name: 'AES-GCM' }, false, ['decrypt']);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytesOfBase64(data.iv), additionalData: new TextEncoder().encode('${PAGE_CODE_LABEL}\u0000' + kind + '\u0000' + code.id) }, key, bytesOfBase64(data.sealed));
    return { secret: new TextDecoder().decode(plain), keep: data.keep !== false };
  } catch (e) {
    throw new Error('the answer to this address does not open with its key: the address was changed on its way here (copied wrong), or the daemon stopped and something else listens on its port. Nothing but the spent part of the address was sent; ' + again + '.');
  }
}
`;
