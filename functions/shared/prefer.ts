/**
 * The `Prefer` request header (RFC 7240): a client's preferences, which a
 * server honours or ignores, never refuses. Only `wait` is supported.
 *
 *   Prefer     = 1#preference
 *   preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
 *   word       = token / quoted-string
 *
 * Several `Prefer` headers arrive joined by commas (API Gateway joins repeated
 * headers so), which is the same list.
 */

/** The longest `wait` the API honours, in seconds (the contract's bound; see shared/api.md). */
export const MAX_WAIT_SECONDS = 10;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const DELTA_SECONDS = /^[0-9]{1,9}$/;

/** Splits `text` at `separator` where it is not inside a quoted string. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/** A `word`'s value: a token as it is, a quoted string unquoted; undefined when it is neither. */
function wordValue(word: string): string | undefined {
  if (TOKEN.test(word)) return word;
  if (word.length >= 2 && word.startsWith('"') && word.endsWith('"')) {
    return word.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return undefined;
}

/**
 * The preferences of a `Prefer` header, by lower-cased name: the first
 * instance of a name counts and later ones are ignored (RFC 7240 §2); a
 * preference without a value maps to `''`. Malformed list elements are
 * skipped, so that one bad element does not cost the client the others.
 */
export function parsePrefer(header: string | undefined): ReadonlyMap<string, string> {
  const preferences = new Map<string, string>();
  if (!header) return preferences;
  for (const element of splitOutsideQuotes(header, ',')) {
    // Parameters after ';' belong to the preference; `wait` defines none, so they are dropped.
    const [head = ''] = splitOutsideQuotes(element, ';');
    const eq = head.indexOf('=');
    const name = (eq < 0 ? head : head.slice(0, eq)).trim().toLowerCase();
    if (!TOKEN.test(name) || preferences.has(name)) continue;
    if (eq < 0) {
      preferences.set(name, '');
      continue;
    }
    const value = wordValue(head.slice(eq + 1).trim());
    if (value !== undefined) preferences.set(name, value);
  }
  return preferences;
}

/**
 * The `wait` a request prefers, in whole seconds, when it is one the API
 * honours (1 to `MAX_WAIT_SECONDS`); undefined otherwise: no `Prefer`, no
 * `wait`, or a `wait` that is malformed or out of range, which RFC 7240 has
 * the server ignore rather than refuse (the request is then served as if the
 * header were absent, and says so by carrying no `Preference-Applied`).
 */
export function preferredWaitSeconds(header: string | undefined): number | undefined {
  const value = parsePrefer(header).get('wait');
  if (value === undefined || !DELTA_SECONDS.test(value)) return undefined;
  const seconds = Number(value);
  return seconds >= 1 && seconds <= MAX_WAIT_SECONDS ? seconds : undefined;
}
