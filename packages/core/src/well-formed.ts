/**
 * Text that is not well-formed Unicode: a lone UTF-16 surrogate. JSON carries one (`"\ud800"`),
 * but it has no UTF-8 form: written to a file name, hashed or sent to another process it becomes
 * U+FFFD, so two different strings (`"a\ud800"`, `"a\udc00"`) become the same bytes. Anything that
 * names a file, a key or a directory by a string's bytes refuses such a string first.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` has a UTF-8 form that is exactly it (no lone surrogate). */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * The most bytes (UTF-8) an id may have: a conversation's, a user's, a platform's, a message's.
 * Each is stored in its conversation's record and index, listed by `GET /api/sessions` and sent
 * with every event; ids of a megabyte each grew a data directory by 66 MB in 30 calls and made the
 * list 60 MB, stalling the daemon (found by an attack). Real ids (`telegram:123456`, a UUID) are short.
 */
export const MAX_ID_BYTES = 256;

/**
 * Characters an id may not hold: C0 and C1 controls, DEL, and the bidirectional formatting
 * characters (marks, embeddings, overrides, isolates). Shown to a person, `telegram:\u202ecli`
 * reads as another id than it is; an id is a name, never text to lay out.
 */

/**
 * What is wrong with `id` as an id, as the end of a sentence about it (`id ${problem}`); `undefined`
 * when it is one. The one rule for ids, wherever they come in: well-formed Unicode, at most
 * {@link MAX_ID_BYTES} bytes in UTF-8, no control or bidirectional formatting character.
 */
export function idProblem(id: string): string | undefined {
  if (!isWellFormedText(id)) {
    return 'is not well-formed Unicode (it holds a lone UTF-16 surrogate, which has no UTF-8 form, so two different ids would be stored as one); send the id as well-formed Unicode';
  }
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes > MAX_ID_BYTES) return `is ${bytes} bytes in UTF-8, over the ${MAX_ID_BYTES} an id may have; send a shorter id (a platform's own chat or user id, a UUID)`;
  const bad = ID_FORBIDDEN.exec(id)?.[0];
  if (bad !== undefined) {
    return `holds U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, a control, formatting or invisible character, which an id may not hold (it would be shown as another id, or as nothing); send the id without it`;
  }
  return undefined;
}

/** `text` with NUL bytes and surrogates shown as escapes, and cut to a length a message can carry. */
export function shownText(text: string, max = 240): string {
  const safe = text.replace(/\0/g, '\\0').replace(/[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return safe.length > max ? `${safe.slice(0, Math.floor((max * 2) / 3))}…${safe.slice(-Math.floor(max / 4))}` : safe;
}

/**
 * A directory entry's name read as bytes, as text when the bytes are UTF-8 exactly; `undefined`
 * when they are not (a text listing would give U+FFFD there, naming another path than the entry's).
 */
export function utf8NameOf(bytes: Uint8Array): string | undefined {
  const text = Buffer.from(bytes).toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

/** A name's bytes for a message: printable ASCII as it is, every other byte as `\xNN`. */
export function shownBytes(bytes: Uint8Array): string {
  return [...bytes].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
}

/**
 * The characters a terminal or a browser does not show as themselves, as a RegExp character class
 * (source text): C0 controls but tab and newline, DEL, C1 controls, the bidirectional formatting
 * characters (an override lays out what follows in another order), and the characters that show
 * as nothing or as a plain space: zero-width ones (U+200B..U+200D, U+2060..U+2064, U+FEFF), the soft
 * hyphen, fillers, invisible operators, the line and paragraph separators (U+2028, U+2029): a path
 * `inv\u200bisible.txt` read as `invisible.txt` on an approval card (found by an attack). Whatever
 * shows a person text from elsewhere (the CLI, the console, the pod's panel) escapes these, from here.
 */
export const UNSHOWN_CHARACTERS = String.raw`[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]`;

/**
 * What an id may not hold: whatever text shows as something else or as nothing (controls,
 * formatting and bidi characters, zero-width ones, line separators, tags; the same set an ask's
 * text escapes, {@link UNSHOWN_CHARACTERS}), so `telegram:cli\u200b` is never a second `telegram:cli`
 * (found by an attack).
 */
const ID_FORBIDDEN = new RegExp(String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|${UNSHOWN_CHARACTERS}`, 'u');

/**
 * Every control (`\p{Cc}`), format (`\p{Cf}`: bidi embeddings, overrides and isolates, zero-width
 * characters, tag characters) and line or paragraph separator code point, and the other characters
 * of {@link UNSHOWN_CHARACTERS}. In an ask's summary a right-to-left override makes `curl …|sh` read
 * as something harmless, and a line separator splits one line in two in a chat adapter.
 */
const INVISIBLE = new RegExp(String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|${UNSHOWN_CHARACTERS}`, 'gu');

/**
 * `text` on one line with every character that is not shown as itself written as its escape:
 * `\n` and `\t`, `\xNN` up to U+00FF, `\uXXXX` and `\u{XXXXX}` above (as the CLI's terminal escaping
 * writes them). Every ask's summary passes through it (the approval desk, the high-risk gate, the
 * reach plugin), so what the owner or the reviewer reads is the order and characters that run.
 */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    const code = c.codePointAt(0) ?? 0;
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
}
