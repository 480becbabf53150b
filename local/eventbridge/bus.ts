import { randomUUID } from 'node:crypto';
import { ACCOUNT, type Assembly, REGION, resourcesOfType } from '../assembly';
import type { KeptDocument } from '../data-dir';
import { type DeliveryFaults, targetFails } from '../delivery-faults';
import type { DuplicateDelivery } from '../duplicates';
import { matchesPattern } from './pattern';
import { type PutEventsFaults, type PutEventsRefusals, refuses } from './put-faults';
import { DEFAULT_BUS, type RuleSpec, type RuleTarget } from './rules';

export { type RuleSpec, rateMs, ruleSpecs } from './rules';

/** Delivers an event to one target ARN (a function, a state machine, a queue). */
/** Delivers to a target; `via` is the rule and the role EventBridge uses for it (the target's RoleArn). */
export type TargetInvoker = (
  arn: string,
  input: unknown,
  via?: { readonly ruleArn: string; readonly roleArn?: string },
) => Promise<void>;

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Resources?: string[];
  Time?: number | string;
}

/** The scheduled times missed while the local cloud was down are fired for this far back at most. */
const MAX_CATCH_UP_MS = 24 * 3_600_000;

/** At most this many delivery attempts per target locally, whatever the policy's (up to 185). */
const LOCAL_MAX_ATTEMPTS = 8;

/**
 * EventBridge for the local cloud: `PutEvents` on the template's buses, rules
 * matched with the same pattern semantics as AWS (checked against
 * event-ruler in the tests), targets invoked asynchronously with retries and
 * a dead-letter queue, and scheduled rules fired on their rate.
 */
export class LocalEventBridge {
  private readonly buses: Set<string>;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  /** Late copies of events' deliveries (`POST /_local/faults/duplicates` with `lateMs`) not yet settled. */
  private lateCopies = 0;

  get lateCopiesPending(): number {
    return this.lateCopies;
  }
  private stopped = false;
  /**
   * `events`: entries accepted on any bus (what EventBridge bills as custom events); `unmatched`:
   * those that matched no rule (put for nothing); `matched`: rule matches.
   */
  readonly stats = {
    events: 0,
    unmatched: 0,
    matched: 0,
    deliveries: 0,
    failedDeliveries: 0,
    duplicatedDeliveries: 0,
    /** PutEvents entries and calls the faults refused (`POST /_local/faults/eventbridge`). */
    refusedEntries: 0,
    refusedCalls: 0,
    /** Target delivery attempts failed by a fault injected (`POST /_local/faults/deliveries`). */
    failedTargetAttempts: 0,
  };
  /** What the PutEvents faults refused since they were last set: entries one by one, whole calls. */
  readonly refused: PutEventsRefusals = { entries: 0, calls: 0 };
  /** The same since the cloud started, never reset (what `GET /_local/faults` reports as injected). */
  readonly refusedEver: PutEventsRefusals = { entries: 0, calls: 0 };
  /** Entries accepted, by `<source> <detail-type>`. */
  readonly eventsByType = new Map<string, number>();

  constructor(
    assembly: Assembly,
    readonly rules: readonly RuleSpec[],
    private readonly targets: Record<string, TargetInvoker>,
    private readonly log: (message: string) => void,
    /** Duplicate delivery injected (read at each match; absent or 0: none). */
    private readonly duplicates?: Readonly<DuplicateDelivery>,
    /** PutEvents refused injected (read at each call; absent: none). */
    private readonly putFaults?: Readonly<PutEventsFaults>,
    /** Target deliveries failing injected (local/delivery-faults.ts; read at each attempt; absent: none). */
    private readonly deliveryFaults?: Readonly<DeliveryFaults>,
  ) {
    this.buses = new Set([
      DEFAULT_BUS,
      ...resourcesOfType(assembly.template, 'AWS::Events::EventBus').map(([id]) => id),
    ]);
    for (const rule of rules) {
      for (const target of rule.targets) this.invokerFor(target.arn);
    }
  }

  get busNames(): string[] {
    return [...this.buses];
  }

  private invokerFor(arn: string): TargetInvoker {
    const service = arn.split(':')[2]!;
    const invoker = this.targets[service];
    if (!invoker) throw new Error(`rule target ${arn}: ${service} targets are not wired locally`);
    return invoker;
  }

  /**
   * Starts the scheduled rules; `intervalMs` overrides every rate (for tests and demos).
   *
   * With `lastFired` (`--data-dir`), each rule's last scheduled time is kept,
   * and a start fires first, one after the other and each with its own
   * `time`, the scheduled times the rule missed while the cloud was down (at
   * its own rate, for the last 24 hours at most), as EventBridge would have
   * fired them: the saga sweeper sweeps the window of its event's time, so a
   * window missed is an order never swept. A time missed by less than the
   * rate is not: the next one sweeps twice the rate back.
   */
  startSchedules(intervalMs?: number, lastFired?: KeptDocument<Record<string, number>>) {
    const fired = lastFired?.read() ?? {};
    const record = (rule: RuleSpec, at: number) => {
      if (!lastFired) return;
      fired[rule.logicalId] = Math.max(fired[rule.logicalId] ?? 0, at);
      lastFired.write(fired);
    };
    const now = Date.now();
    for (const rule of this.rules) {
      if (rule.scheduleMs === undefined || !rule.enabled) continue;
      const previous = fired[rule.logicalId];
      if (previous !== undefined) {
        const missed: number[] = [];
        for (
          let at = Math.max(previous, now - MAX_CATCH_UP_MS) + rule.scheduleMs;
          at < now;
          at += rule.scheduleMs
        ) {
          missed.push(at);
        }
        if (missed.length > 0) {
          this.log(
            `rule ${rule.logicalId}: firing the ${missed.length} scheduled times missed while stopped`,
          );
          const catchUp = (async () => {
            for (const at of missed) {
              if (this.stopped) return;
              const event = this.scheduledEvent(rule, at);
              this.stats.matched++;
              for (const target of rule.targets) await this.deliver(rule, target, event);
              record(rule, at);
            }
          })().finally(() => this.inFlight.delete(catchUp));
          this.inFlight.add(catchUp);
        }
      }
      const timer = setInterval(() => {
        const at = Date.now();
        this.dispatch(rule, this.scheduledEvent(rule, at));
        record(rule, at);
      }, intervalMs ?? rule.scheduleMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** The event a scheduled rule sends at `at` (epoch milliseconds). */
  private scheduledEvent(rule: RuleSpec, at: number) {
    return this.envelope(
      { Source: 'aws.events', DetailType: 'Scheduled Event', Detail: '{}', Time: new Date(at).toISOString() },
      [rule.arn],
    );
  }

  private envelope(entry: PutEventsEntry, resources: string[] = entry.Resources ?? []) {
    return {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType!,
      source: entry.Source!,
      account: ACCOUNT,
      time: new Date(entry.Time ? Number(entry.Time) * 1000 || Date.parse(String(entry.Time)) : Date.now())
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z'),
      region: REGION,
      resources,
      detail: JSON.parse(entry.Detail!) as unknown,
    };
  }

  /** The `AWSEvents.*` operations the app calls. */
  async handle(operation: string, input: Record<string, unknown>) {
    if (operation !== 'PutEvents') {
      throw Object.assign(new Error(`EventBridge ${operation} is not served locally`), {
        code: 'UnknownOperationException',
      });
    }
    const entries = (input.Entries as PutEventsEntry[] | undefined) ?? [];
    if (entries.length < 1 || entries.length > 10) throw new Error('PutEvents takes 1 to 10 entries');
    if (this.putFaults && refuses(this.putFaults, 'calls', this.refused)) {
      this.stats.refusedCalls++;
      this.refusedEver.calls++;
      // A total failure: the whole call refused as a throttle (status 400), which the SDK retries.
      throw Object.assign(new Error('Rate exceeded.'), { code: 'ThrottlingException', status: 400 });
    }
    const results = entries.map((entry) => {
      if (!this.putFaults || !refuses(this.putFaults, 'entries', this.refused)) return this.put(entry);
      this.stats.refusedEntries++;
      this.refusedEver.entries++;
      return { ErrorCode: this.putFaults.entryError, ErrorMessage: 'Entry refused (fault injected)' };
    });
    return { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results };
  }

  private put(entry: PutEventsEntry): { EventId: string } | { ErrorCode: string; ErrorMessage: string } {
    const busName = String(entry.EventBusName ?? DEFAULT_BUS)
      .split('/')
      .at(-1)!;
    if (!this.buses.has(busName))
      return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `no bus ${busName}` };
    if (!entry.Source || !entry.DetailType || !entry.Detail) {
      return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Source, DetailType and Detail are required' };
    }
    let event: ReturnType<LocalEventBridge['envelope']>;
    try {
      event = this.envelope(entry);
    } catch {
      return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is not valid JSON' };
    }
    this.stats.events++;
    const key = `${entry.Source} ${entry.DetailType}`;
    this.eventsByType.set(key, (this.eventsByType.get(key) ?? 0) + 1);
    let matched = false;
    for (const rule of this.rules) {
      if (!rule.enabled || !rule.pattern || rule.busName !== busName) continue;
      if (matchesPattern(rule.pattern, event as unknown as Record<string, unknown>)) {
        matched = true;
        this.dispatch(rule, event);
      }
    }
    if (!matched) this.stats.unmatched++;
    return { EventId: event.id };
  }

  private dispatch(rule: RuleSpec, event: Record<string, unknown>) {
    this.stats.matched++;
    const rate = this.duplicates?.busEvents ?? 0;
    // At-least-once: the same event (same id) to every target twice, each delivery with its own retries.
    const copies = rate > 0 && Math.random() < rate ? 2 : 1;
    for (const target of rule.targets) {
      for (let copy = 0; copy < copies; copy++) {
        if (copy > 0) this.stats.duplicatedDeliveries++;
        // The copy late, if asked: after later events' first deliveries (out of order).
        const lateMs = copy > 0 ? (this.duplicates?.lateMs ?? 0) : 0;
        // A scheduled run's late copy is not waited for: the schedule makes more of them while the fault lasts.
        const counted = lateMs > 0 && rule.scheduleMs === undefined;
        if (counted) this.lateCopies++;
        const delivery = (
          lateMs > 0
            ? new Promise<void>((resolve) => setTimeout(resolve, lateMs))
                .then(() => (this.stopped ? undefined : this.deliver(rule, target, event)))
                .finally(() => {
                  if (counted) this.lateCopies--;
                })
            : this.deliver(rule, target, event)
        ).finally(() => this.inFlight.delete(delivery));
        this.inFlight.add(delivery);
      }
    }
  }

  private async deliver(rule: RuleSpec, target: RuleTarget, event: Record<string, unknown>) {
    const input = target.input
      ? (JSON.parse(target.input) as unknown)
      : target.inputPath
        ? jsonPath(event, target.inputPath)
        : event;
    const attempts = Math.min(target.maximumRetryAttempts + 1, LOCAL_MAX_ATTEMPTS);
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.deliveryFaults && targetFails(this.deliveryFaults, rule.logicalId)) {
          this.stats.failedTargetAttempts++;
          throw new Error(
            `TargetFailing: rule ${rule.logicalId} target ${target.id} failed (fault injected)`,
          );
        }
        await this.invokerFor(target.arn)(target.arn, input, {
          ruleArn: rule.arn,
          ...(target.roleArn ? { roleArn: target.roleArn } : {}),
        });
        this.stats.deliveries++;
        return;
      } catch (error) {
        if (attempt >= attempts) {
          this.stats.failedDeliveries++;
          this.log(
            `rule ${rule.logicalId} target ${target.id} failed ${attempt} times: ${(error as Error).message}`,
          );
          if (target.deadLetterArn) {
            await this.targets.sqs?.(target.deadLetterArn, {
              event,
              error: (error as Error).message,
              rule: rule.arn,
            });
          }
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 5000)));
      }
    }
  }

  /**
   * Delivers a dead-lettered event again, once, to the targets of the rule
   * (`ruleArn`) whose dead-letter queue is `queueArn`, as a redrive does:
   * true when every such target took it.
   */
  async redeliver(ruleArn: string, queueArn: string, event: Record<string, unknown>): Promise<boolean> {
    const rule = this.rules.find((r) => r.arn === ruleArn);
    const targets = rule?.targets.filter((t) => t.deadLetterArn === queueArn) ?? [];
    if (!rule || targets.length === 0) return false;
    for (const target of targets) {
      const input = target.input
        ? (JSON.parse(target.input) as unknown)
        : target.inputPath
          ? jsonPath(event, target.inputPath)
          : event;
      await this.invokerFor(target.arn)(target.arn, input, {
        ruleArn: rule.arn,
        ...(target.roleArn ? { roleArn: target.roleArn } : {}),
      });
      this.stats.deliveries++;
    }
    return true;
  }

  /** Resolves when every delivery under way has finished (for a clean stop). */
  async drain() {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  stop() {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
  }
}

/** The `$.a.b` paths EventBridge's InputPath takes. */
function jsonPath(value: unknown, path: string): unknown {
  if (path === '$') return value;
  return path
    .replace(/^\$\.?/, '')
    .split('.')
    .reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);
}
