/** The template's EventBridge rules as the local bus runs them: pattern, schedule and targets. */
import { type Assembly, arnOf, type Resolve, resourcesOfType } from '../assembly';
import { type EventPattern, validatePattern } from './pattern';

/** One target of a rule, with its retry policy and dead-letter queue. */
export interface RuleTarget {
  readonly id: string;
  readonly arn: string;
  readonly input?: string;
  readonly inputPath?: string;
  readonly maximumRetryAttempts: number;
  readonly deadLetterArn?: string;
  readonly roleArn?: string;
}

export interface RuleSpec {
  readonly logicalId: string;
  readonly arn: string;
  readonly busName: string;
  readonly pattern?: EventPattern;
  readonly scheduleMs?: number;
  readonly enabled: boolean;
  readonly targets: readonly RuleTarget[];
}

export const DEFAULT_BUS = 'default';

/** `rate(5 minutes)` in milliseconds; cron expressions are not run locally. */
export function rateMs(expression: string): number {
  const match = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!match) throw new Error(`schedule ${expression} is not supported locally (only rate(...))`);
  const unit = match[2]!.startsWith('minute')
    ? 60_000
    : match[2]!.startsWith('hour')
      ? 3_600_000
      : 86_400_000;
  return Number(match[1]) * unit;
}

export function ruleSpecs(assembly: Assembly, resolve: Resolve): RuleSpec[] {
  return resourcesOfType(assembly.template, 'AWS::Events::Rule').map(([logicalId, r]) => {
    const p = resolve(r.Properties ?? {}) as Record<string, unknown>;
    const pattern = p.EventPattern as EventPattern | undefined;
    if (pattern) validatePattern(pattern);
    const busName = String(p.EventBusName ?? DEFAULT_BUS)
      .split('/')
      .at(-1)!;
    return {
      logicalId,
      arn: arnOf(logicalId, r),
      busName,
      ...(pattern ? { pattern } : {}),
      ...(p.ScheduleExpression ? { scheduleMs: rateMs(String(p.ScheduleExpression)) } : {}),
      enabled: p.State !== 'DISABLED',
      targets: ((p.Targets as Record<string, unknown>[]) ?? []).map((t) => {
        if (t.InputTransformer)
          throw new Error(`rule ${logicalId}: InputTransformer is not supported locally`);
        const retry = t.RetryPolicy as { MaximumRetryAttempts?: number } | undefined;
        const dlq = (t.DeadLetterConfig as { Arn?: string } | undefined)?.Arn;
        return {
          id: String(t.Id),
          arn: String(t.Arn),
          ...(t.Input ? { input: String(t.Input) } : {}),
          ...(t.InputPath ? { inputPath: String(t.InputPath) } : {}),
          maximumRetryAttempts: retry?.MaximumRetryAttempts ?? 185,
          ...(dlq ? { deadLetterArn: dlq } : {}),
          ...(t.RoleArn ? { roleArn: String(t.RoleArn) } : {}),
        };
      }),
    };
  });
}
