import { join, resolve as resolvePath } from 'node:path';
import { serveFaultAdmin, serveRedrive, serveStatsAdmin } from './admin-api';
import type { AdmissionOptions } from './admission';
import { readAssembly, resolver } from './assembly';
import type { TokenRequest } from './auth';
import { AwsEndpoint } from './aws-endpoint';
import { runDirOf } from './cache-dir';
import {
  admissionControl,
  eventBus,
  functionRuntime,
  serveIssuer,
  serveLambdaInvoke,
  stepFunctionsOf,
  streamDeliveries,
  wiringOf,
} from './cloud-parts';
import { CONSOLE_PATH, serveConsole } from './console';
import { CpuMeter } from './cpu';
import { dataDirLayout, JsonFile, lockDataDir } from './data-dir';
import { DynamoJsonClient } from './dynamo-client';
import { DynamoDbEngine, Journal } from './dynamodb';
import { gateFunctionCalls } from './function-call-gate';
import { LocalHttpApi, routeSpecs } from './http-api';
import { serveLogs } from './logs';
import { LocalPrincipals } from './principals';
import { reloader } from './reload';
import { assertRunnable } from './resource-types';
import type { FaultRule } from './stepfunctions';
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

export type LocalCloud = Awaited<ReturnType<typeof startLocalCloud>>;

/** What stopping the cloud runs, last started first. */
type Stoppers = (() => Promise<void> | void)[];
/** Runs a start-up phase, counting its milliseconds. */
type Timed = <T>(phase: string, work: Promise<T>) => Promise<T>;

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
  const stoppers: Stoppers = [];
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
    const storage = await startStorage(options, assemblyPath, context, log, timed, stoppers);
    const { assembly, tables } = storage;
    const backEnd = await startBackEnd(options, storage, workDir, log, stoppers);
    const { endpoint, runtime, telemetry, cpuMeter, deliveries, stepFunctions, bus } = backEnd;
    const { queues, pollers } = deliveries;
    const { api, issuer, admission } = await startFrontEnd(
      options,
      storage,
      backEnd,
      log,
      timed,
      stoppers,
      () => stopping,
    );

    const wiring = wiringOf(runtime, api, tables, pollers, bus, stepFunctions, queues);
    endpoint.serveAdmin('/_local/wiring', () => wiring);
    serveConsole(endpoint, stepFunctions, queues, runtime.logDirectory !== undefined);
    serveLogs(endpoint, runtime.logDirectory);
    serveStatsAdmin(endpoint, {
      telemetry,
      cpuMeter,
      pollers,
      bus,
      stepFunctions,
      queues,
      admission,
      runtime,
    });
    const reload = reloader(assemblyPath, context, log, assembly, runtime);

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

/** The data directory (if any), the DynamoDB engine and the template's tables, from the synthesized app. */
async function startStorage(
  options: LocalCloudOptions,
  assemblyPath: string,
  context: Record<string, string>,
  log: (message: string) => void,
  timed: Timed,
  stoppers: Stoppers,
) {
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
  assertRunnable(assembly);

  const dynamo = new DynamoJsonClient(engine);
  const tables = await timed('tables', createTables(assembly, resolver(assembly), dynamo));
  const resolve = resolver(
    assembly,
    new Map([...tables].flatMap(([id, t]) => (t.streamArn ? [[id, t.streamArn] as const] : []))),
  );
  return { data, engine, assembly, dynamo, tables, resolve };
}

/**
 * Behind the AWS endpoint: the functions and their calls' gate, the stream pollers, Step Functions and
 * EventBridge, with the admin API's faults and redrive.
 */
async function startBackEnd(
  options: LocalCloudOptions,
  storage: Awaited<ReturnType<typeof startStorage>>,
  workDir: string,
  log: (message: string) => void,
  stoppers: Stoppers,
) {
  const { data, engine, assembly, dynamo, tables, resolve } = storage;
  const endpoint = new AwsEndpoint(engine);
  await endpoint.start(options.awsPort ?? 0);
  stoppers.push(() => endpoint.stop());

  // IAM enforced locally (local/iam.ts): each function's role, read (and checked for what the local
  // evaluator supports) before anything runs.
  const principals = new LocalPrincipals(assembly, resolve);

  const runtime = functionRuntime(assembly, resolve, endpoint.url, workDir, options);
  stoppers.push(() => runtime.stop());
  const telemetry = new Telemetry(tables);
  const cpuMeter = new CpuMeter(runtime, engine);
  runtime.onInvocation((r) => telemetry.invocation(r));

  const deliveries = streamDeliveries(
    assembly,
    resolve,
    tables,
    dynamo,
    runtime,
    principals,
    workDir,
    data,
    log,
  );
  const { queues, pollers } = deliveries;
  const poke = (tableNames: readonly string[]) => {
    for (const poller of pollers) {
      if (tableNames.includes(poller.spec.tableLogicalId) || tableNames.includes('*')) poller.poke();
    }
  };
  // Every write wakes its tables' pollers at once; every call is counted as DynamoDB bills it.
  engine.onWrite(poke);
  engine.onRead((operation, units) => telemetry.read(units, operation));
  endpoint.onWrite((_caller, operation, input) => telemetry.write(operation, input));
  const gate = gateFunctionCalls(endpoint, runtime, principals);

  // Kept by reference: the admin API replaces the rules while the cloud runs.
  const faults: FaultRule[] = [...(options.faults ?? [])];
  const stepFunctions = stepFunctionsOf(assembly, resolve, runtime, principals, dynamo, faults, log);
  endpoint.authorize(gate.authorizeCaller);
  endpoint.register('AWSStepFunctions.', (operation, input) => stepFunctions.handle(operation, input));
  stoppers.push(async () => {
    await stepFunctions.stop();
  });

  const bus = eventBus(assembly, resolve, runtime, principals, stepFunctions, deliveries, log);
  endpoint.register('AWSEvents.', (operation, input) => bus.handle(operation, input));
  serveLambdaInvoke(endpoint, runtime);
  serveFaultAdmin(endpoint, { steps: faults, gate, deaths: runtime.deaths, ...deliveries }, bus);
  serveRedrive(endpoint, queues, pollers, bus);
  stoppers.push(async () => {
    bus.stop();
    await bus.drain();
  });
  return { endpoint, runtime, telemetry, cpuMeter, deliveries, stepFunctions, bus };
}

/** The HTTP API with its admission control and issuer, its functions warm; then everything starts serving. */
async function startFrontEnd(
  options: LocalCloudOptions,
  storage: Awaited<ReturnType<typeof startStorage>>,
  backEnd: Awaited<ReturnType<typeof startBackEnd>>,
  log: (message: string) => void,
  timed: Timed,
  stoppers: Stoppers,
  stopping: () => boolean,
) {
  const { data, assembly, resolve } = storage;
  const { endpoint, runtime, telemetry, deliveries, stepFunctions, bus } = backEnd;
  const { pollers } = deliveries;
  const admission = admissionControl(runtime, stepFunctions, options.admission);
  const routes = routeSpecs(assembly, resolve, runtime, stageThrottles(assembly));
  const issuer = serveIssuer(endpoint, assembly, resolve, routes, data);
  const api = new LocalHttpApi(routes, runtime, log, admission, (authorizer) => issuer.keysFor(authorizer));
  api.onRequest((r) => telemetry.request(r));

  // The API's functions are warm before the first request; the others (stream consumers, saga
  // steps, sweepers) start meanwhile, and an invocation waits for its sandbox if it comes first.
  // A sandbox that cannot start fails its invocations, as it would at start.
  await timed('apiSandboxes', runtime.warm(routes.map((r) => r.functionId)));
  runtime.warmAll().catch((error: Error) => {
    // Stopping while they start ends them: not a failure.
    if (!stopping()) log(`a function sandbox failed to start: ${error.message}`);
  });
  for (const poller of pollers) poller.start();
  stoppers.push(() => Promise.all(pollers.map((p) => p.stop())).then(() => undefined));
  bus.startSchedules(options.scheduleIntervalMs, data ? new JsonFile(data.schedules) : undefined);
  await api.start(options.port ?? 3000);
  stoppers.push(() => api.stop());
  return { api, issuer, admission };
}
