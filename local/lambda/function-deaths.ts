/**
 * A function's sandbox dying with its invocation (`POST /_local/faults/functions`),
 * as a Lambda execution environment dies when its runtime process exits (out
 * of memory, a crash in native code, its host lost): the caller gets Lambda's
 * `Runtime.ExitError` and no answer, whatever the invocation had done, and the
 * sandbox's module state (its caches, its clients) is gone with it.
 *
 * - `after-work`: the handler has finished, every write it made committed, and
 *   the sandbox dies before its answer leaves. The caller's retry (a Task's
 *   `Retry`, the client's resend with its `Idempotency-Key`, the stream's
 *   redelivery of the batch, a scheduled run's next) must find the first
 *   effect and do nothing twice.
 * - `midway`: the sandbox dies at a moment drawn at random within its run
 *   (up to the function's recent duration): between two writes, or during one
 *   (a write in flight is made or not, its answer lost either way); one whose
 *   work ends before that moment dies as it answers. The retry must finish
 *   what the first attempt began.
 *
 * Only the functions' invocations die, as they would on AWS; off by default.
 */

export const DEATH_MOMENTS = ['after-work', 'midway'] as const;
export type DeathMoment = (typeof DEATH_MOMENTS)[number];

export interface FunctionDeathRule {
  readonly when: DeathMoment;
  /** Share of the matching invocations that die, from 0 to 1. */
  readonly rate: number;
  /** The functions, by logical id or its prefix (`SagaSteps`); default: every function. */
  readonly functions?: readonly string[];
  /** At most this many deaths (then the rule lies dormant until set again): `1` for a test's one death. */
  readonly count?: number;
}

export function validateFunctionDeaths(rules: unknown): FunctionDeathRule[] {
  if (!Array.isArray(rules)) throw new Error('function faults: an array of rules');
  return rules.map((given: unknown, index): FunctionDeathRule => {
    const rule = (given ?? {}) as Partial<Record<keyof FunctionDeathRule, unknown>>;
    for (const key of Object.keys(rule))
      if (!['when', 'rate', 'functions', 'count'].includes(key))
        throw new Error(`function fault ${index}: unknown field ${key} (when, rate, functions, count)`);
    if (!DEATH_MOMENTS.includes(rule.when as DeathMoment))
      throw new Error(`function fault ${index}: when must be one of ${DEATH_MOMENTS.join(', ')}`);
    if (typeof rule.rate !== 'number' || !(rule.rate >= 0 && rule.rate <= 1))
      throw new Error(`function fault ${index}: rate must be a number from 0 to 1`);
    if (
      rule.functions !== undefined &&
      (!Array.isArray(rule.functions) || rule.functions.some((f) => typeof f !== 'string' || f === ''))
    )
      throw new Error(`function fault ${index}: functions must be an array of logical ids or prefixes`);
    if (rule.count !== undefined && !(Number.isInteger(rule.count) && (rule.count as number) >= 1))
      throw new Error(`function fault ${index}: count must be a positive integer`);
    return {
      when: rule.when as DeathMoment,
      rate: rule.rate,
      ...(rule.functions ? { functions: [...(rule.functions as string[])] } : {}),
      ...(rule.count !== undefined ? { count: rule.count as number } : {}),
    };
  });
}

/** The death rules in force, and what they did: the runtime draws from it at each invocation. */
export class FunctionDeaths {
  private rules: readonly FunctionDeathRule[] = [];
  private readonly perRule = new Map<FunctionDeathRule, number>();
  /** Invocations killed since the cloud started, by moment. */
  readonly injected = { afterWork: 0, midway: 0 };

  constructor(private readonly random: () => number = Math.random) {}

  get inForce(): readonly FunctionDeathRule[] {
    return this.rules;
  }

  /** Replaces the rules ([] turns them off); their counts start again. */
  set(rules: readonly FunctionDeathRule[]) {
    this.rules = rules;
    this.perRule.clear();
  }

  /** Whether this invocation of `functionId` dies at `when` (drawn once per invocation and moment). */
  draw(functionId: string, when: DeathMoment): boolean {
    for (const rule of this.rules) {
      if (rule.when !== when) continue;
      if (rule.functions && !rule.functions.some((f) => functionId.startsWith(f))) continue;
      if (rule.count !== undefined && (this.perRule.get(rule) ?? 0) >= rule.count) continue;
      if (!(this.random() < rule.rate)) continue;
      this.perRule.set(rule, (this.perRule.get(rule) ?? 0) + 1);
      if (when === 'after-work') this.injected.afterWork++;
      else this.injected.midway++;
      return true;
    }
    return false;
  }
}
