/**
 * The local cloud's own admin API on the AWS endpoint (`/_local/...`): the
 * faults to inject, the dead letters' redrive, and the counters, pools and
 * memory it reports.
 */
import type { AdmissionControl, AdmissionOptions } from './admission';
import type { AwsEndpoint } from './aws-endpoint';
import type { CpuMeter } from './cpu';
import { type DeliveryFaults, type PoisonRecords, validateDeliveryFaults } from './delivery-faults';
import { type DuplicateDelivery, validateDuplicates } from './duplicates';
import type { LocalEventBridge } from './eventbridge/bus';
import { type PutEventsFaults, validatePutEventsFaults } from './eventbridge/put-faults';
import type { gateFunctionCalls } from './function-call-gate';
import { validateDynamoFaults } from './lambda/dynamo-faults';
import { type FunctionDeaths, type LambdaRuntime, validateFunctionDeaths } from './lambda/runtime';
import type { LocalQueues } from './queues';
import type { FaultRule, LocalStepFunctions } from './stepfunctions';
import type { StreamPoller } from './streams';
import type { Telemetry } from './telemetry';

/** The faults the admin API sets: each part that injects one reads it by reference. */
export interface InjectedFaults {
  /** Failures injected into saga Task states. */
  readonly steps: FaultRule[];
  /** The DynamoDB faults, on the gate of the functions' calls. */
  readonly gate: ReturnType<typeof gateFunctionCalls>;
  readonly duplicates: DuplicateDelivery;
  readonly putEventsFaults: PutEventsFaults;
  readonly deliveryFaults: DeliveryFaults;
  readonly poison: PoisonRecords;
  /** Invocations killed with their sandbox (local/lambda/function-deaths.ts). */
  readonly deaths: FunctionDeaths;
}

/** `POST /_local/faults...` sets each kind of fault; `GET /_local/faults` reads them all, and what they did. */
export function serveFaultAdmin(endpoint: AwsEndpoint, injected: InjectedFaults, bus: LocalEventBridge) {
  const { steps: faults, gate, duplicates, putEventsFaults, deliveryFaults, poison, deaths } = injected;
  endpoint.servePath('POST', /^\/_local\/faults$/, async (_match, body) => {
    const rules = JSON.parse(body.toString('utf8') || '[]') as FaultRule[];
    faults.splice(0, faults.length, ...rules);
    return { status: 200, body: { faults } };
  });
  // DynamoDB refusing a share of the functions' calls (local/lambda/dynamo-faults.ts); [] turns it off.
  endpoint.servePath('POST', /^\/_local\/faults\/dynamodb$/, async (_match, body) => {
    gate.setDynamoFaults(validateDynamoFaults(JSON.parse(body.toString('utf8') || '[]')));
    return { status: 200, body: { dynamodb: gate.dynamoFaults } };
  });
  // Functions dying with their invocation, after their work or midway (local/lambda/function-deaths.ts); [] turns it off.
  endpoint.servePath('POST', /^\/_local\/faults\/functions$/, async (_match, body) => {
    deaths.set(validateFunctionDeaths(JSON.parse(body.toString('utf8') || '[]')));
    return { status: 200, body: { functions: deaths.inForce } };
  });
  // Duplicate delivery of stream batches and bus events (local/duplicates.ts); {} turns it off.
  endpoint.servePath('POST', /^\/_local\/faults\/duplicates$/, async (_match, body) => {
    const set = validateDuplicates(JSON.parse(body.toString('utf8') || '{}'));
    delete duplicates.lateMs;
    Object.assign(duplicates, set);
    return { status: 200, body: { duplicates } };
  });
  endpoint.servePath('POST', /^\/_local\/faults\/eventbridge$/, async (_match, body) => {
    const set = validatePutEventsFaults(JSON.parse(body.toString('utf8') || '{}'));
    delete putEventsFaults.count;
    Object.assign(putEventsFaults, set);
    bus.refused.entries = 0;
    bus.refused.calls = 0;
    return { status: 200, body: { eventbridge: putEventsFaults } };
  });
  endpoint.servePath('POST', /^\/_local\/faults\/deliveries$/, async (_match, body) => {
    const set = validateDeliveryFaults(JSON.parse(body.toString('utf8') || '{}'));
    delete deliveryFaults.poisonFunction;
    delete deliveryFaults.failingRule;
    Object.assign(deliveryFaults, set);
    // Lifted: the poison records are records like any other again (a redrive delivers them).
    if (set.poisonRecords === 0) poison.clear();
    return { status: 200, body: { deliveries: deliveryFaults } };
  });
  endpoint.serveAdmin('/_local/faults', () => ({
    steps: faults,
    dynamodb: gate.dynamoFaults,
    eventbridge: putEventsFaults,
    deliveries: deliveryFaults,
    functions: deaths.inForce,
    duplicates,
    // What the faults have done since the cloud started: calls refused and answers lost, invocations killed.
    injected: {
      dynamodb: { ...gate.injected },
      eventbridge: { refusedEntries: bus.refusedEver.entries, refusedCalls: bus.refusedEver.calls },
      deliveries: { poisonRecords: poison.ever, failedTargetAttempts: bus.stats.failedTargetAttempts },
      functions: { ...deaths.injected },
    },
  }));
}

/** `POST /_local/dead-letters/redrive` (`npm run redrive`). */
export function serveRedrive(
  endpoint: AwsEndpoint,
  queues: LocalQueues,
  pollers: readonly StreamPoller[],
  bus: LocalEventBridge,
) {
  // `npm run redrive`: every dead letter delivered again, once; each delivered is deleted, the rest stay.
  endpoint.servePath('POST', /^\/_local\/dead-letters\/redrive$/, async () => {
    const redriven: { queue: string; messageId: string }[] = [];
    const left: { queue: string; messageId: string; reason: string }[] = [];
    for (const arn of queues.arns) {
      const queue = arn.split(':').at(-1)!;
      for (const message of [...queues.messages(arn)]) {
        let reason: string;
        try {
          reason = (await redriveOne(arn, message.body)) ?? '';
        } catch (error) {
          reason = (error as Error).message;
        }
        if (reason === '' && queues.remove(arn, message.messageId))
          redriven.push({ queue, messageId: message.messageId });
        else left.push({ queue, messageId: message.messageId, reason: reason || 'not found' });
      }
    }
    return { status: 200, body: { redriven, left } };
  });
  /** Delivers one dead letter again: undefined when it was handled, else why not. */
  const redriveOne = async (queueArn: string, body: string): Promise<string | undefined> => {
    const letter = JSON.parse(body) as {
      DDBStreamBatchInfo?: {
        shardId: string;
        startSequenceNumber: string;
        endSequenceNumber: string;
        streamArn: string;
      };
      rule?: string;
      event?: Record<string, unknown>;
    };
    const batch = letter.DDBStreamBatchInfo;
    if (batch) {
      const poller = pollers.find(
        (p) => p.spec.streamArn === batch.streamArn && p.spec.onFailureArn === queueArn,
      );
      if (!poller) return `no stream mapping sends ${batch.streamArn} to this queue`;
      const done = await poller.redrive(batch.shardId, batch.startSequenceNumber, batch.endSequenceNumber);
      return done ? undefined : 'the function failed on the records again';
    }
    if (letter.rule && letter.event) {
      const done = await bus.redeliver(letter.rule, queueArn, letter.event);
      return done ? undefined : `no target of ${letter.rule} has this dead-letter queue`;
    }
    return 'neither a stream batch nor a rule target’s event';
  };
}

/** What the admin API reports of the running cloud, and resets. */
export interface ReportedParts {
  readonly telemetry: Telemetry;
  readonly cpuMeter: CpuMeter;
  readonly pollers: readonly StreamPoller[];
  readonly bus: LocalEventBridge;
  readonly stepFunctions: LocalStepFunctions;
  readonly queues: LocalQueues;
  readonly admission: AdmissionControl;
  readonly runtime: LambdaRuntime;
}

/** The counters, pools, dead letters, admission bounds and memory (`/_local/stats` and the rest), and their reset. */
export function serveStatsAdmin(endpoint: AwsEndpoint, parts: ReportedParts) {
  const { telemetry, cpuMeter, pollers, bus, stepFunctions, queues, admission, runtime } = parts;
  endpoint.serveAdmin('/_local/stats', () => ({
    ...telemetry.snapshot(),
    cpu: cpuMeter.sinceReset(),
    streams: Object.fromEntries(pollers.map((p) => [p.spec.logicalId, { ...p.stats, pending: p.pending }])),
    eventBridge: {
      ...bus.stats,
      byType: Object.fromEntries(bus.eventsByType),
      lateCopiesPending: bus.lateCopiesPending,
    },
    stepFunctions: {
      ...stepFunctions.stats,
      running: stepFunctions.runningCount,
      tasksInFlight: stepFunctions.tasksInFlightCount,
    },
    deadLetters: queues.depths(),
    admission: admission.settings,
  }));
  // Each function's pool of sandboxes: cap, size, queue, and how many invocations overlapped in one (none).
  endpoint.serveAdmin('/_local/sandboxes', () => runtime.sandboxes());
  // What each dead-letter queue holds, by queue name (the chaos run explains every message).
  endpoint.serveAdmin('/_local/dead-letters', () =>
    Object.fromEntries(queues.arns.map((arn) => [arn.split(':').at(-1)!, queues.messages(arn)])),
  );
  endpoint.servePath('POST', /^\/_local\/admission$/, async (_match, body) => {
    admission.configure(JSON.parse(body.toString('utf8') || '{}') as AdmissionOptions);
    return { status: 200, body: admission.settings };
  });
  endpoint.serveAdmin('/_local/memory', async () => ({
    mainHeapMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
    functions: await runtime.memory(),
  }));
  endpoint.serveAdmin('/_local/reset-stats', () => {
    telemetry.reset();
    cpuMeter.reset();
    for (const key of Object.keys(stepFunctions.stats) as (keyof typeof stepFunctions.stats)[]) {
      stepFunctions.stats[key] = 0;
    }
    for (const key of Object.keys(bus.stats) as (keyof typeof bus.stats)[]) bus.stats[key] = 0;
    bus.eventsByType.clear();
    for (const poller of pollers) {
      for (const key of Object.keys(poller.stats) as (keyof typeof poller.stats)[]) poller.stats[key] = 0;
    }
    return { reset: true };
  });
}
