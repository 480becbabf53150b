import type { AdmissionOptions } from './admission';
import type { CpuTimes } from './cpu';
import type { LocalEventBridge } from './eventbridge/bus';
import type { LocalStepFunctions } from './stepfunctions';
import type { StreamPoller } from './streams';
import type { Telemetry } from './telemetry';

/**
 * The local cloud's counters as `GET /_local/stats` answers them (admin-api.ts
 * builds the answer from these parts): requests and invocations by route and
 * function, DynamoDB reads, writes and capacity units by table, CPU time,
 * stream mappings, EventBridge, Step Functions, dead letters and admission
 * control's settings, since the start or the last `/_local/reset-stats`.
 */
export type LocalStats = ReturnType<Telemetry['snapshot']> & {
  readonly cpu: CpuTimes;
  readonly streams: Record<string, StreamPoller['stats'] & { readonly pending: StreamPoller['pending'] }>;
  readonly eventBridge: LocalEventBridge['stats'] & {
    readonly byType: Record<string, number>;
    /** Late copies of deliveries still to come (a duplicates fault with `lateMs`): a quiescent cloud has none. */
    readonly lateCopiesPending: number;
  };
  readonly stepFunctions: LocalStepFunctions['stats'] & {
    readonly running: number;
    readonly tasksInFlight: number;
  };
  readonly deadLetters: Record<string, number>;
  readonly admission: Required<AdmissionOptions>;
};

/** Reads a running local cloud's counters from its AWS endpoint (`GET /_local/stats`). */
export async function readLocalStats(awsEndpoint: string): Promise<LocalStats> {
  const response = await fetch(`${awsEndpoint}/_local/stats`);
  if (!response.ok) throw new Error(`GET /_local/stats on ${awsEndpoint}: ${response.status}`);
  return (await response.json()) as LocalStats;
}
