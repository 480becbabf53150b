/**
 * Fault injection for Task states: before an attempt of the named state,
 * with probability `rate`, wait `delayMs` and/or fail with `error` (default
 * `TransientError`, the name a saga step gives a failure worth retrying) and
 * `cause`. A rule with only a delay slows the attempt;
 * a rule with neither a delay nor an error fails it.
 */
export interface FaultRule {
  state: string;
  rate: number;
  error?: string;
  cause?: string;
  delayMs?: number;
  /** Applies to this many attempts at most, then no more (e.g. "fail twice, then let it through"). */
  times?: number;
}

export const DEFAULT_FAULT_ERROR = 'TransientError';

/** Parses `"ReserveStock:error=TransientError:rate=0.2,CapturePayment:delayMs=500:rate=1"` (rate defaults to 1). */
export function parseFaults(spec: string | undefined): FaultRule[] {
  if (!spec?.trim()) return [];
  return spec.split(',').map((text) => {
    const [state, ...fields] = text.trim().split(':');
    if (!state) throw new Error(`fault "${text}": no state name`);
    const rule: FaultRule = { state, rate: 1 };
    for (const field of fields) {
      const eq = field.indexOf('=');
      const key = eq < 0 ? field : field.slice(0, eq);
      const value = eq < 0 ? '' : field.slice(eq + 1);
      switch (key) {
        case 'rate':
          rule.rate = Number(value);
          if (value === '' || !Number.isFinite(rule.rate) || rule.rate < 0 || rule.rate > 1) {
            throw new Error(`fault "${text}": rate must be a number from 0 to 1`);
          }
          break;
        case 'delayMs':
          rule.delayMs = Number(value);
          if (value === '' || !Number.isInteger(rule.delayMs) || rule.delayMs < 0) {
            throw new Error(`fault "${text}": delayMs must be a whole number of milliseconds`);
          }
          break;
        case 'times':
          rule.times = Number(value);
          if (value === '' || !Number.isInteger(rule.times) || rule.times < 1) {
            throw new Error(`fault "${text}": times must be a whole number ≥ 1`);
          }
          break;
        case 'error':
          if (!value) throw new Error(`fault "${text}": empty error`);
          rule.error = value;
          break;
        case 'cause':
          rule.cause = value;
          break;
        default:
          throw new Error(`fault "${text}": unknown field ${key} (rate, delayMs, error, cause, times)`);
      }
    }
    return rule;
  });
}
