import { join, resolve as resolvePath } from 'node:path';
import { AdmissionControl, type AdmissionOptions } from './admission';
import { ACCOUNT, REGION, readAssembly, resolver } from './assembly';
import { jwtAuthorizers, keptSigningKey, LocalIssuer, type TokenRequest } from './auth';
import { AwsEndpoint, type CallAuthorizer, type PathHandler } from './aws-endpoint';
import { CONSOLE_PATH, serveConsole } from './console';
import { CpuMeter } from './cpu';
import { dataDirLayout, JsonFile, lockDataDir } from './data-dir';
import {
  type DeliveryFaults,
  noDeliveryFaults,
  PoisonRecords,
  validateDeliveryFaults,
} from './delivery-faults';
import { noDuplicates, validateDuplicates } from './duplicates';
import { DynamoJsonClient } from './dynamo-client';
import { DynamoDbEngine, Journal } from './dynamodb';
import { LocalEventBridge, ruleSpecs } from './eventbridge/bus';
import { noPutEventsFaults, type PutEventsFaults, validatePutEventsFaults } from './eventbridge/put-faults';
import { LocalHttpApi, routeSpecs } from './http-api';
import { AccessDeniedError, authorize } from './iam';
import { endpointAuthorizations } from './iam-actions';
import {
  awsRefusal,
  callKey,
  type DynamoFaultRule,
  type LostAnswers,
  lostAnswerFor,
  refusalFor,
  validateDynamoFaults,
} from './lambda/dynamo-faults';
import { FunctionError, functionSpecs, LambdaRuntime } from './lambda/runtime';
import { serveLogs } from './logs';
import { runDirOf } from './maven';
import { LocalPrincipals } from './principals';
import { LocalQueues } from './queues';
import { type TemplateChanges, templateChanges } from './reload';
import { type FaultRule, LocalStepFunctions } from './stepfunctions';
import { type MappingSpec, mappingSpecs, StreamPoller, type StreamPosition } from './streams';
import { PROJECT_ROOT, synthesize } from './synth';
import { createTables } from './tables';
import { Telemetry } from './telemetry';
import { stageThrottles } from './throttle';

export interface LocalCloudOptions {
  /** Port of the HTTP API on 127.0.0.1 (0 picks a free one). */
  readonly port?: number;
  /** The AWS endpoint's port (DynamoDB, EventBridge, Step Functions, the counters); 0 picks a free one. */
  readonly awsPort?: number;
  readonly stage?: string;
  /** Extra CDK context, e.g. a short `reservationTtlSeconds` for tests. */
  readonly context?: Record<string, string>;
  /** Where the cloud assembly is synthesized; default cdk.out (cdk.out.debug with `debug`). */
  readonly assemblyDir?: string;
  /**
   * A debug build (`npm start -- --debug`): the functions bundled unminified with source maps
   * (the app's `debugBundles` context), and their timeouts lifted to Lambda's longest, 15 minutes,
   * so that an invocation stopped at a breakpoint is not ended under the debugger.
   */
  readonly debug?: boolean;
  /** Fires every scheduled rule at this interval instead of its own rate. */
  readonly scheduleIntervalMs?: number;
  /** Where function logs and (without `dataDir`) dead letters go. */
  readonly workDir?: string;
  /**
   * Keep the cloud's data in this directory (`--data-dir`), and resume from
   * it if it holds an earlier start's: the DynamoDB engine's journal, the stream
   * mappings' positions, the dead-letter queues, the scheduled rules' last
   * times (see local/data-dir.ts). Undefined: everything in memory.
   */
  readonly dataDir?: string;
  /** Failures injected into saga Task states from the start (they can be changed later through the admin API). */
  readonly faults?: FaultRule[];
  /** Also print function logs to this process's output. */
  readonly echoFunctionLogs?: boolean;
  /**
   * Sandboxes per function at most (a function with reserved concurrency has
   * that many instead); default 4. Each costs about 25–50 MB resident.
   */
  readonly maxSandboxesPerFunction?: number;
  /** Sandboxes of all functions at most (never below one per function); default 12 (memory: see DEFAULT_MAX_SANDBOXES). */
  readonly maxSandboxes?: number;
  /** Sandboxes beyond the caps in the room of paused ones (see DEFAULT_MAX_LENT_SANDBOXES). */
  readonly maxLentSandboxes?: number;
  /** Admission control's bounds at the HTTP API (see local/admission.ts); they can be changed at run time. */
  readonly admission?: AdmissionOptions;
  readonly log?: (message: string) => void;
}

/** Resource types the local cloud knows it needs no local counterpart for (IAM, logs, API plumbing). */
export const NOT_RUN_LOCALLY = new Set([
  'AWS::IAM::Role',
  'AWS::IAM::Policy',
  'AWS::Lambda::Permission',
  'AWS::Logs::LogGroup',
  'AWS::SQS::QueuePolicy',
  'AWS::ApiGatewayV2::Api',
  'AWS::ApiGatewayV2::Integration',
  'AWS::CDK::Metadata',
  // Observability: dashboards, alarms and the alarm topic (and its key) watch AWS's metrics, which are not made locally.
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::SNS::Topic',
  'AWS::SNS::TopicPolicy',
  'AWS::KMS::Key',
  // A scheduled function's on-failure destination: locally a rule target's own retries and dead-letter queue stand in.
  'AWS::Lambda::EventInvokeConfig',
  // A stage's own identity provider: the local cloud runs no Cognito, it is the issuer itself (local/auth:
  // it signs the access tokens the pool would, with the pool's issuer and the client's id as audience).
  'AWS::Cognito::UserPool',
  'AWS::Cognito::UserPoolClient',
  'AWS::Cognito::UserPoolResourceServer',
  'AWS::Cognito::UserPoolDomain',
]);

export type LocalCloud = Awaited<ReturnType<typeof startLocalCloud>>;

/** A function's timeout in a debug build: Lambda's longest. */
const DEBUG_TIMEOUT_MS = 15 * 60_000;

/**
 * Runs the synthesized app on this machine: the DynamoDB engine for the tables,
 * a worker-thread sandbox per function, the HTTP API, stream pollers for
 * the event source mappings, and EventBridge for the rules — all read from
 * the cloud assembly, all on 127.0.0.1.
 */
export async function startLocalCloud(options: LocalCloudOptions = {}) {
  const log = options.log ?? ((m: string) => console.log(`[local] ${m}`));
  const context = {
    stage: options.stage ?? 'dev',
    ...(options.debug ? { debugBundles: 'true' } : {}),
    ...options.context,
  };
  // A debug build has an assembly of its own, so that switching back and forth does not re-synthesize.
  const assemblyPath = resolvePath(
    options.assemblyDir ?? join(PROJECT_ROOT, options.debug ? 'cdk.out.debug' : 'cdk.out'),
  );
  // Each assembly's cloud keeps its own logs and dead letters, so that test clouds and `npm start` do not mix.
  const workDir = options.workDir ?? runDirOf(assemblyPath);
  const started = performance.now();
  /** Milliseconds of each start-up phase. */
  const phases: Record<string, number> = {};
  const stoppers: (() => Promise<void> | void)[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    for (const s of stoppers.reverse()) await s();
    stoppers.length = 0;
  };

  try {
    const timed = async <T>(phase: string, work: Promise<T>) => {
      const t0 = performance.now();
      const result = await work;
      phases[phase] = Math.round(performance.now() - t0);
      return result;
    };
    const data = options.dataDir === undefined ? undefined : dataDirLayout(resolvePath(options.dataDir));
    if (data) stoppers.push(lockDataDir(data));
    // The engine in memory, or replaying its journal (see local/dynamodb/journal.ts).
    const journal = data ? new Journal(data.dynamodb) : undefined;
    if (journal) stoppers.push(() => journal.close());
    const engine = await timed(
      'dynamodb',
      Promise.resolve().then(() => new DynamoDbEngine(journal)),
    );
    const assemblyDir = await timed('synth', synthesize(assemblyPath, context, log));
    const assembly = readAssembly(assemblyDir);

    const unknown = Object.entries(assembly.template.Resources).filter(
      ([, r]) => !NOT_RUN_LOCALLY.has(r.Type) && !RUN_LOCALLY.has(r.Type),
    );
    if (unknown.length > 0) {
      throw new Error(
        `the local cloud cannot run ${unknown.map(([id, r]) => `${id} (${r.Type})`).join(', ')}`,
      );
    }

    const dynamo = new DynamoJsonClient(engine);
    const tables = await timed('tables', createTables(assembly, resolver(assembly), dynamo));
    const resolve = resolver(
      assembly,
      new Map([...tables].flatMap(([id, t]) => (t.streamArn ? [[id, t.streamArn] as const] : []))),
    );

    const endpoint = new AwsEndpoint(engine);
    await endpoint.start(options.awsPort ?? 0);
    stoppers.push(() => endpoint.stop());

    // IAM enforced locally (local/iam.ts): each function's role, read (and checked for what the local
    // evaluator supports) before anything runs.
    const principals = new LocalPrincipals(assembly, resolve);

    const specs = functionSpecs(assembly, resolve, {
      AWS_ENDPOINT_URL: endpoint.url,
      AWS_SECRET_ACCESS_KEY: 'local',
      // No X-Ray daemon runs locally: traces would only be dropped.
      POWERTOOLS_TRACE_ENABLED: 'false',
      AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
    }).map((spec) => ({
      ...spec,
      // Each function signs its calls with its own access key: the AWS endpoint knows the caller by it.
      environment: { ...spec.environment, AWS_ACCESS_KEY_ID: spec.logicalId },
      ...(options.debug ? { timeoutMs: DEBUG_TIMEOUT_MS } : {}),
    }));
    const runtime = new LambdaRuntime(specs, join(workDir, 'logs'), {
      echoLogs: options.echoFunctionLogs ?? false,
      ...(options.maxSandboxesPerFunction === undefined
        ? {}
        : { maxSandboxesPerFunction: options.maxSandboxesPerFunction }),
      ...(options.maxSandboxes === undefined ? {} : { maxSandboxes: options.maxSandboxes }),
      ...(options.maxLentSandboxes === undefined ? {} : { maxLentSandboxes: options.maxLentSandboxes }),
    });
    stoppers.push(() => runtime.stop());
    const telemetry = new Telemetry(tables);
    const cpuMeter = new CpuMeter(runtime, engine);
    runtime.onInvocation((r) => telemetry.invocation(r));

    const queues = data
      ? new LocalQueues(assembly, data.deadLetters, true)
      : new LocalQueues(assembly, join(workDir, 'dead-letters'));
    const mappings = mappingSpecs(assembly, resolve, tables, runtime);
    // As creating the mapping on AWS does: its function's role must read the stream and send to its destination.
    for (const mapping of mappings) authorizeMapping(principals, mapping);
    // Duplicate delivery injected by the admin API (off until set); the pollers and the bus read it by reference.
    const duplicates = noDuplicates();
    // PutEvents refused, in part or whole (local/eventbridge/put-faults.ts); {} turns it off.
    const putEventsFaults: PutEventsFaults = noPutEventsFaults();
    // Poison stream records and failing rule targets (local/delivery-faults.ts); {} turns them off.
    const deliveryFaults: DeliveryFaults = noDeliveryFaults();
    const poison = new PoisonRecords(deliveryFaults);
    const pollers = mappings.map(
      (spec) =>
        new StreamPoller(
          spec,
          dynamo,
          runtime,
          queues,
          log,
          data ? new JsonFile<StreamPosition>(join(data.streams, `${spec.logicalId}.json`)) : undefined,
          duplicates,
          poison,
        ),
    );
    const poke = (tableNames: readonly string[]) => {
      for (const poller of pollers) {
        if (tableNames.includes(poller.spec.tableLogicalId) || tableNames.includes('*')) poller.poke();
      }
    };
    // Every write wakes its tables' pollers at once; every call is counted as DynamoDB bills it.
    engine.onWrite(poke);
    engine.onRead((operation, units) => telemetry.read(units, operation));
    endpoint.onWrite((_caller, operation, input) => telemetry.write(operation, input));
    // IAM enforced locally: a function's DynamoDB call is checked against its role before it runs, and
    // faults injected into the functions' calls (`POST /_local/faults/dynamodb`) refuse a share of them.
    let dynamoFaults: readonly DynamoFaultRule[] = [];
    // Answers lost per lost-answer rule (for its `count`), and what the faults did since they were last set.
    const lostAnswers: LostAnswers = { perRule: new Map(), calls: new Set() };
    const injected = { refused: 0, lostAnswers: 0 };
    // A call signed with a function's key is that function's; other callers (tests, the load tools, the CLI)
    // stand for the account's administrator and are not checked.
    const authorizeCaller: CallAuthorizer = (caller, prefix, operation, input) => {
      if (!caller || !runtime.specs.has(caller)) return;
      const principal = principals.function(caller);
      for (const { action, resource } of endpointAuthorizations(prefix, operation, input)) {
        authorize(principal, action, [resource]);
      }
    };
    endpoint.gateDynamo((caller, operation, input) => {
      try {
        authorizeCaller(caller, 'DynamoDB_20120810.', operation, input);
      } catch (error) {
        // Never let through unchecked: a request the check cannot read is refused, saying so.
        const message =
          error instanceof AccessDeniedError ? error.message : `local IAM check: ${(error as Error).message}`;
        return {
          status: 400,
          body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message }),
        };
      }
      if (!caller || !runtime.specs.has(caller)) return undefined;
      if (dynamoFaults.length === 0) return undefined;
      const refusal = refusalFor(dynamoFaults, operation);
      if (refusal) {
        injected.refused++;
        const { status, body } = awsRefusal(refusal.error, operation, input);
        return { status, body: JSON.stringify(body) };
      }
      const call = callKey(operation, input);
      const lose = lostAnswerFor(dynamoFaults, operation, lostAnswers, Math.random, call);
      if (!lose) return undefined;
      return {
        loseAnswer: lose.way,
        lost: () => {
          lostAnswers.perRule.set(lose.rule, (lostAnswers.perRule.get(lose.rule) ?? 0) + 1);
          if (lose.rule.once) lostAnswers.calls.add(call);
          injected.lostAnswers++;
        },
      };
    });

    /** A state machine's role, as IAM evaluates it. */
    const roleOf = (machine: { logicalId: string; roleArn?: string }) => {
      if (!machine.roleArn) throw new Error(`state machine ${machine.logicalId} has no role`);
      const roleId = principals.roleIdOf(machine.roleArn, `state machine ${machine.logicalId}`);
      return principals.role(roleId, machine.logicalId);
    };
    // Kept by reference: the admin API replaces the rules while the cloud runs.
    const faults: FaultRule[] = [...(options.faults ?? [])];
    const stepFunctions = new LocalStepFunctions(
      assembly,
      resolve,
      runtime,
      log,
      faults,
      (machine, functionArn) => {
        authorize(roleOf(machine), 'lambda:InvokeFunction', [functionArn]);
      },
      async (machine, parameters) => {
        const table = String(parameters.TableName);
        authorize(roleOf(machine), 'dynamodb:GetItem', [
          `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}`,
        ]);
        // A copy: the state machine's engine owns its input, the table its item (the read is counted by onRead).
        return structuredClone(await dynamo.call('DynamoDB_20120810.GetItem', parameters));
      },
    );
    endpoint.authorize(authorizeCaller);
    endpoint.register('AWSStepFunctions.', (operation, input) => stepFunctions.handle(operation, input));
    stoppers.push(async () => {
      await stepFunctions.stop();
    });

    const bus = new LocalEventBridge(
      assembly,
      ruleSpecs(assembly, resolve),
      {
        lambda: async (arn, input, via) => {
          const functionId = runtime.functionIdOf(arn);
          // EventBridge invokes a function as allowed by the function's resource policy.
          if (via) principals.authorizeServiceInvoke(functionId, 'events.amazonaws.com', via.ruleArn);
          await runtime.invoke(functionId, input);
        },
        states: async (arn, input, via) => {
          // EventBridge starts an execution with the target's role.
          if (via) {
            if (!via.roleArn) throw new Error(`rule ${via.ruleArn}: a state machine target needs a RoleArn`);
            const roleId = principals.roleIdOf(via.roleArn, `rule ${via.ruleArn}`);
            authorize(principals.role(roleId, 'events'), 'states:StartExecution', [arn]);
          }
          await stepFunctions.startExecution(arn, input);
        },
        sqs: (arn, input) => queues.send(arn, input),
      },
      log,
      duplicates,
      putEventsFaults,
      deliveryFaults,
    );
    endpoint.register('AWSEvents.', (operation, input) => bus.handle(operation, input));
    // `aws lambda invoke`: Lambda's REST Invoke, with a function error reported as Lambda does.
    endpoint.servePath(
      'POST',
      /^\/2015-03-31\/functions\/([^/]+)\/invocations$/,
      async (match, body): ReturnType<PathHandler> => {
        const functionId = runtime.functionIdOf(decodeURIComponent(match[1]!));
        try {
          const result = await runtime.invoke(
            functionId,
            body.length ? JSON.parse(body.toString('utf8')) : {},
          );
          return { status: 200, body: result, headers: { 'x-amz-executed-version': '$LATEST' } };
        } catch (error) {
          if (!(error instanceof FunctionError)) throw error;
          return {
            status: 200,
            headers: { 'x-amz-function-error': 'Unhandled' },
            body: { errorType: error.errorType, errorMessage: error.message, trace: error.trace },
          };
        }
      },
    );
    endpoint.servePath('POST', /^\/_local\/faults$/, async (_match, body) => {
      const rules = JSON.parse(body.toString('utf8') || '[]') as FaultRule[];
      faults.splice(0, faults.length, ...rules);
      return { status: 200, body: { faults } };
    });
    // DynamoDB refusing a share of the functions' calls (local/lambda/dynamo-faults.ts); [] turns it off.
    endpoint.servePath('POST', /^\/_local\/faults\/dynamodb$/, async (_match, body) => {
      dynamoFaults = validateDynamoFaults(JSON.parse(body.toString('utf8') || '[]'));
      lostAnswers.perRule.clear();
      lostAnswers.calls.clear();
      return { status: 200, body: { dynamodb: dynamoFaults } };
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
    endpoint.serveAdmin('/_local/faults', () => ({
      steps: faults,
      dynamodb: dynamoFaults,
      eventbridge: putEventsFaults,
      deliveries: deliveryFaults,
      duplicates,
      // What the DynamoDB faults have done since the cloud started: calls refused, answers lost after a write.
      injected: {
        dynamodb: { ...injected },
        eventbridge: { refusedEntries: bus.refusedEver.entries, refusedCalls: bus.refusedEver.calls },
        deliveries: { poisonRecords: poison.ever, failedTargetAttempts: bus.stats.failedTargetAttempts },
      },
    }));
    stoppers.push(async () => {
      bus.stop();
      await bus.drain();
    });

    const machineArns = new Set(stepFunctions.stateMachines.map((m) => m.arn));
    const admission = new AdmissionControl(
      runtime,
      {
        get runningCount() {
          return stepFunctions.runningCount;
        },
        runningLongerThan: (ms) => stepFunctions.runningLongerThan(ms),
        get executionsStarted() {
          return stepFunctions.executionsStarted;
        },
        taskFunctionIds: stepFunctions.taskFunctionIds,
        startingFunctionIds: new Set(
          [...runtime.specs.values()]
            .filter((spec) => Object.values(spec.environment).some((v) => machineArns.has(v)))
            .map((spec) => spec.logicalId),
        ),
      },
      options.admission,
    );
    const routes = routeSpecs(assembly, resolve, runtime, stageThrottles(assembly));
    // The local cloud is the template's issuer (locally no Cognito runs): it mints the tokens
    // (POST /_local/token) that the HTTP API checks as the routes' JWT authorizer does.
    const issuer = LocalIssuer.forTemplate(
      keptSigningKey(data?.issuerKey),
      [...jwtAuthorizers(assembly, resolve).values()],
      new Set(routes.flatMap((r) => (r.authorization.type === 'JWT' ? r.authorization.scopes : []))),
      `${endpoint.url}/_local`,
    );
    endpoint.servePath('POST', /^\/_local\/token$/, async (_match, body) => ({
      ...issuer.token(body),
      headers: { 'cache-control': 'no-store' },
    }));
    endpoint.servePath('GET', /^\/_local\/jwks\.json$/, async () => ({ status: 200, body: issuer.jwks }));
    endpoint.serveAdmin('/_local/issuer', () => issuer.description(endpoint.url));
    const api = new LocalHttpApi(routes, runtime, log, admission, (authorizer) => issuer.keysFor(authorizer));
    api.onRequest((r) => telemetry.request(r));

    // The API's functions are warm before the first request; the others (stream consumers, saga
    // steps, sweepers) start meanwhile, and an invocation waits for its sandbox if it comes first.
    // A sandbox that cannot start fails its invocations, as it would at start.
    await timed('apiSandboxes', runtime.warm(routes.map((r) => r.functionId)));
    runtime.warmAll().catch((error: Error) => {
      // Stopping while they start ends them: not a failure.
      if (!stopping) log(`a function sandbox failed to start: ${error.message}`);
    });
    for (const poller of pollers) poller.start();
    stoppers.push(() => Promise.all(pollers.map((p) => p.stop())).then(() => undefined));
    bus.startSchedules(options.scheduleIntervalMs, data ? new JsonFile(data.schedules) : undefined);
    await api.start(options.port ?? 3000);
    stoppers.push(() => api.stop());

    const wiring = {
      functions: [...runtime.specs.keys()],
      routes: api.routeKeys,
      tables: [...tables.keys()],
      eventSourceMappings: pollers.map((p) => p.spec.logicalId),
      /** How each mapping batches: its size and its gathering window (from the template). */
      mappingBatching: Object.fromEntries(
        pollers.map(({ spec }) => [
          spec.logicalId,
          { batchSize: spec.batchSize, batchingWindowMs: spec.batchingWindowMs },
        ]),
      ),
      rules: bus.rules.map((r) => r.logicalId),
      stateMachines: stepFunctions.stateMachines.map((m) => m.logicalId),
      buses: bus.busNames,
      queues: queues.arns.map((arn) => arn.split(':').at(-1)!),
    };
    endpoint.serveAdmin('/_local/wiring', () => wiring);
    serveConsole(endpoint, stepFunctions, queues, runtime.logDirectory !== undefined);
    serveLogs(endpoint, runtime.logDirectory);
    endpoint.serveAdmin('/_local/stats', () => ({
      ...telemetry.snapshot(),
      cpu: cpuMeter.sinceReset(),
      streams: Object.fromEntries(pollers.map((p) => [p.spec.logicalId, { ...p.stats, pending: p.pending }])),
      eventBridge: { ...bus.stats, byType: Object.fromEntries(bus.eventsByType) },
      stepFunctions: { ...stepFunctions.stats, running: stepFunctions.runningCount },
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

    // The assembly the cloud runs; `reload` moves it on when only functions' bundles changed.
    let running = assembly;
    /**
     * Re-synthesizes the app (`npm start -- --watch`) and, if only functions'
     * bundles changed, points those functions at their new bundles (their
     * sandboxes are replaced as they free up; the tables and their data stay).
     * Anything else that changed is reported and nothing is applied: tables,
     * routes, rules and state machines are wired once, at start.
     */
    const reload = async (): Promise<TemplateChanges> => {
      const next = readAssembly(await synthesize(assemblyPath, context, log));
      const changes = templateChanges(running.template, next.template);
      if (changes.other.length > 0) return changes;
      for (const [functionId, assetPath] of changes.code) {
        const current = runtime.specs.get(functionId)!;
        const codeDir = join(next.dir, assetPath);
        runtime.replaceFunction({
          ...current,
          codeDir,
          environment: { ...current.environment, LAMBDA_TASK_ROOT: codeDir },
        });
      }
      running = next;
      return changes;
    };

    return {
      url: `http://127.0.0.1:${api.port}`,
      awsEndpoint: endpoint.url,
      consoleUrl: `${endpoint.url}${CONSOLE_PATH}`,
      /** The local issuer: where tokens come from, its issuer, audience and scopes. */
      issuer: issuer.description(endpoint.url),
      /** A token from the local issuer, as POST /_local/token mints it. */
      mintToken: (request: TokenRequest) => issuer.mint(request),
      startupMs: performance.now() - started,
      startupPhases: phases,
      wiring,
      assembly,
      stats: () => telemetry.snapshot(),
      reload,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * What Lambda checks when an event source mapping is created: the function's
 * role may describe and read the stream (and list streams) and send to the
 * on-failure destination. A missing grant fails the start, as it fails the
 * deployment on AWS.
 */
function authorizeMapping(principals: LocalPrincipals, mapping: MappingSpec) {
  const principal = principals.function(mapping.functionId);
  try {
    for (const action of ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']) {
      authorize(principal, action, [mapping.streamArn]);
    }
    authorize(principal, 'dynamodb:ListStreams', ['*']);
    if (mapping.onFailureArn) authorize(principal, 'sqs:SendMessage', [mapping.onFailureArn]);
  } catch (error) {
    throw new Error(`event source mapping ${mapping.logicalId}: ${(error as Error).message}`);
  }
}

/** Resource types with a local counterpart. */
export const RUN_LOCALLY = new Set([
  'AWS::DynamoDB::Table',
  'AWS::Lambda::Function',
  'AWS::Lambda::EventSourceMapping',
  'AWS::ApiGatewayV2::Route',
  // Its route settings: the stage's throttle.
  'AWS::ApiGatewayV2::Stage',
  // The routes' JWT authorizer: the HTTP API enforces it (issuer, audience, signature, expiry, scopes)
  // before any function runs, with the local issuer's keys (local/auth).
  'AWS::ApiGatewayV2::Authorizer',
  'AWS::Events::EventBus',
  'AWS::Events::Rule',
  'AWS::SQS::Queue',
  'AWS::StepFunctions::StateMachine',
]);
