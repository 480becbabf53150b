import type { LogLine } from '../logs';

/** How the saga console writes JSON, log lines and history details for reading (saga-view.ts re-exports it). */

/** The JSON in a text, or undefined if it is none. */
export const parse = (json: string | undefined): unknown => {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
};

/** The value at `path` in parsed JSON, or undefined. */
export const field = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
    value,
  );

/** A text cut to `max` characters. */
export const shorten = (value: string, max = 120) =>
  value.length > max ? `${value.slice(0, max - 1)}…` : value;

/** A JSON text indented for reading; a text that is not JSON as it is. */
export function prettyJson(json: string | undefined): string {
  if (json === undefined) return '';
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

/**
 * What a log line says in one line: its message (Powertools'), or for an EMF
 * document the metrics it emits with their values, or else the line itself.
 */
export function logLineSummary(line: Pick<LogLine, 'message' | 'fields' | 'text'>): string {
  if (line.message !== undefined) return line.message;
  const directives = field(line.fields, '_aws', 'CloudWatchMetrics');
  if (Array.isArray(directives)) {
    const names = directives.flatMap((d) => {
      const metrics = field(d, 'Metrics');
      return Array.isArray(metrics) ? metrics.map((m) => field(m, 'Name')) : [];
    });
    const values = names
      .filter((n): n is string => typeof n === 'string')
      .map((n) => `${n}=${JSON.stringify(line.fields?.[n])}`);
    if (values.length > 0) return `metrics ${values.join(', ')}`;
  }
  return shorten(line.text, 200);
}

const JSON_FIELDS = new Set(['input', 'output', 'parameters', 'cause']);

/**
 * An event's details for reading: the JSON texts Step Functions records as
 * strings (`input`, `output`, `parameters`, a `cause` that is JSON) parsed, so
 * that they indent with the rest.
 */
export function readableDetails(details: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(details).map(([key, value]) => {
      if (!JSON_FIELDS.has(key) || typeof value !== 'string') return [key, value];
      const parsed = parse(value);
      return [key, parsed === undefined ? value : parsed];
    }),
  );
}
