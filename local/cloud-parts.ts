/**
 * The parts of the local cloud that startLocalCloud (cloud.ts) builds from
 * the assembly and wires to each other: the functions' runtime, the stream
 * pollers and their dead letters, Step Functions, EventBridge, Lambda's
 * Invoke path, admission control and the local issuer.
 */
import { join } from 'node:path';
import { AdmissionControl, type AdmissionOptions } from './admission';
import { ACCOUNT, type Assembly, REGION, type Resolve } from './assembly';
import { jwtAuthorizers, keptSigningKey, LocalIssuer } from './auth';
import type { AwsEndpoint, PathHandler } from './aws-endpoint';
import { type dataDirLayout, JsonFile } from './data-dir';
import { type DeliveryFaults, noDeliveryFaults, PoisonRecords } from './delivery-faults';
import { noDuplicates } from './duplicates';
import type { DynamoJsonClient } from './dynamo-client';
import { LocalEventBridge, ruleSpecs } from './eventbridge/bus';
import { noPutEventsFaults, type PutEventsFaults } from './eventbridge/put-faults';
import type { LocalHttpApi, RouteSpec } from './http-api';
import { authorize } from './iam';
import { FunctionError, functionSpecs, LambdaRuntime } from './lambda/runtime';
import type { LocalPrincipals } from './principals';
import { LocalQueues } from './queues';
import { type FaultRule, LocalStepFunctions } from './stepfunctions';
import { type MappingSpec, mappingSpecs } from './stream-mappings';
import { StreamPoller, type StreamPosition } from './streams';
import type { LocalTable } from './tables';

/** Where a cloud started with `--data-dir` keeps each kind of data (see local/data-dir.ts). */
export type DataDir = ReturnType<typeof dataDirLayout>;

/** A function's timeout in a debug build: Lambda's longest. */
const DEBUG_TIMEOUT_MS = 15 * 60_000;

/** What the functions' runtime takes of the cloud's options. */
export interface FunctionOptions {
  readonly debug?: boolean;
  readonly echoFunctionLogs?: boolean;
  readonly maxSandboxesPerFunction?: number;
  readonly maxSandboxes?: number;
  readonly maxLentSandboxes?: number;
}

/** The template's functions, each calling AWS at `endpointUrl` with a key of its own, in a runtime of sandboxes. */
export function functionRuntime(
  assembly: Assembly,
  resolve: Resolve,
  endpointUrl: string,
  workDir: string,
  options: FunctionOptions,
): LambdaRuntime {
  const specs = functionSpecs(assembly, resolve, {
    AWS_ENDPOINT_URL: endpointUrl,
    AWS_SECRET_ACCESS_KEY: 'local',
  }).map((spec) => ({
    ...spec,
    // Each function signs its calls with its own access key: the AWS endpoint knows the caller by it.
    environment: { ...spec.environment, AWS_ACCESS_KEY_ID: spec.logicalId },
    ...(options.debug ? { timeoutMs: DEBUG_TIMEOUT_MS } : {}),
  }));
  return new LambdaRuntime(specs, join(workDir, 'logs'), {
    echoLogs: options.echoFunctionLogs ?? false,
    ...(options.maxSandboxesPerFunction === undefined
      ? {}
      : { maxSandboxesPerFunction: options.maxSandboxesPerFunction }),
    ...(options.maxSandboxes === undefined ? {} : { maxSandboxes: options.maxSandboxes }),
    ...(options.maxLentSandboxes === undefined ? {} : { maxLentSandboxes: options.maxLentSandboxes }),
  });
}

/** The stream pollers, the queues they (and the bus) send dead letters to, and the delivery faults they read. */
export interface Deliveries {
  readonly queues: LocalQueues;
  readonly pollers: StreamPoller[];
  readonly duplicates: ReturnType<typeof noDuplicates>;
  readonly putEventsFaults: PutEventsFaults;
  readonly deliveryFaults: DeliveryFaults;
  readonly poison: PoisonRecords;
}

/** The event source mappings' pollers, checked as AWS checks a mapping, and what they deliver with. */
export function streamDeliveries(
  assembly: Assembly,
  resolve: Resolve,
  tables: ReadonlyMap<string, LocalTable>,
  dynamo: DynamoJsonClient,
  runtime: LambdaRuntime,
  principals: LocalPrincipals,
  workDir: string,
  data: DataDir | undefined,
  log: (message: string) => void,
): Deliveries {
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
  return { queues, pollers, duplicates, putEventsFaults, deliveryFaults, poison };
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

/** The state machines, their Task states' calls checked against each machine's role. */
export function stepFunctionsOf(
  assembly: Assembly,
  resolve: Resolve,
  runtime: LambdaRuntime,
  principals: LocalPrincipals,
  dynamo: DynamoJsonClient,
  faults: FaultRule[],
  log: (message: string) => void,
): LocalStepFunctions {
  /** A state machine's role, as IAM evaluates it. */
  const roleOf = (machine: { logicalId: string; roleArn?: string }) => {
    if (!machine.roleArn) throw new Error(`state machine ${machine.logicalId} has no role`);
    const roleId = principals.roleIdOf(machine.roleArn, `state machine ${machine.logicalId}`);
    return principals.role(roleId, machine.logicalId);
  };
  return new LocalStepFunctions(
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
}

/** The buses and their rules, delivering to the functions, state machines and queues as their targets' roles allow. */
export function eventBus(
  assembly: Assembly,
  resolve: Resolve,
  runtime: LambdaRuntime,
  principals: LocalPrincipals,
  stepFunctions: LocalStepFunctions,
  deliveries: Deliveries,
  log: (message: string) => void,
): LocalEventBridge {
  const { queues, duplicates, putEventsFaults, deliveryFaults } = deliveries;
  return new LocalEventBridge(
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
}

/** `aws lambda invoke`: Lambda's REST Invoke, with a function error reported as Lambda does. */
export function serveLambdaInvoke(endpoint: AwsEndpoint, runtime: LambdaRuntime) {
  endpoint.servePath(
    'POST',
    /^\/2015-03-31\/functions\/([^/]+)\/invocations$/,
    async (match, body): ReturnType<PathHandler> => {
      const functionId = runtime.functionIdOf(decodeURIComponent(match[1]!));
      try {
        const result = await runtime.invoke(functionId, body.length ? JSON.parse(body.toString('utf8')) : {});
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
}

/** Admission control at the HTTP API, reading the functions' pools and the saga's executions. */
export function admissionControl(
  runtime: LambdaRuntime,
  stepFunctions: LocalStepFunctions,
  options: AdmissionOptions | undefined,
): AdmissionControl {
  const machineArns = new Set(stepFunctions.stateMachines.map((m) => m.arn));
  return new AdmissionControl(
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
    options,
  );
}

/**
 * The local cloud is the template's issuer (locally no Cognito runs): it mints the tokens
 * (POST /_local/token) that the HTTP API checks as the routes' JWT authorizer does.
 */
export function serveIssuer(
  endpoint: AwsEndpoint,
  assembly: Assembly,
  resolve: Resolve,
  routes: readonly RouteSpec[],
  data: DataDir | undefined,
): LocalIssuer {
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
  return issuer;
}

/** What the cloud wired from the template (`/_local/wiring`): a test proves it is everything. */
export function wiringOf(
  runtime: LambdaRuntime,
  api: LocalHttpApi,
  tables: ReadonlyMap<string, LocalTable>,
  pollers: readonly StreamPoller[],
  bus: LocalEventBridge,
  stepFunctions: LocalStepFunctions,
  queues: LocalQueues,
) {
  return {
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
}
