/**
 * @commerce/local-cloud: the local cloud's one interface (see README.md).
 *
 * In: a synthesized CDK app (its cloud assembly). Out: a cloud on 127.0.0.1
 * with its endpoints (the HTTP API's URL, the AWS endpoint's), its counters
 * and `stop()`:
 *
 * ```ts
 * const cloud = await startLocalCloud({ port: 0, assemblyDir: 'cdk.out' });
 * await fetch(`${cloud.url}/customers/x`);
 * const stats = await readLocalStats(cloud.awsEndpoint);
 * await cloud.stop();
 * ```
 *
 * The other exports are what a product's tests, load runs and scripts need
 * beside it: the cloud as a child process (`npm start`'s command), DynamoDB
 * Local on its own, the assembly reader, and the checks behind the cloud's
 * fault and filter settings. Nothing else of the package is public.
 */

// The cloud assembly as the cloud reads it.
export { type Assembly, type Resource, readAssembly, resourcesOfType, type Template } from './assembly';
// The cloud in this process: start it from an assembly; its endpoints, counters, reload and stop.
export {
  type LocalCloud,
  type LocalCloudOptions,
  NOT_RUN_LOCALLY,
  RUN_LOCALLY,
  startLocalCloud,
} from './cloud';
export { CloudProcess, type CloudProcessOptions } from './cloud-process';
export type { CpuTimes } from './cpu';
export { type DuplicateDelivery, validateDuplicates } from './duplicates';
export { DynamoJsonClient } from './dynamo-client';
// DynamoDB Local alone (for a store's tests and benchmarks), and a lean client of its JSON protocol.
export {
  type DynamoDbLocal,
  defaultJvmFlags,
  installDynamoDbLocal,
  type StartDynamoDbLocalOptions,
  startDynamoDbLocal,
} from './dynamodb';
// Event patterns and stream filters as the cloud applies them, and AWS's own verdicts (event-ruler, Java).
export type { EventPattern } from './eventbridge/pattern';
export { type RulerResult, rulerVerdicts } from './eventbridge/ruler';
export {
  awsRefusal,
  type DynamoFaultRule,
  refusalFor,
  validateDynamoFaults,
} from './lambda/dynamo-faults';
// The meter each sandbox installs on its DynamoDB calls (faults, counts), for a client outside a sandbox.
export { installDynamoMeter } from './lambda/dynamo-meter';
// The cloud as a child process: `npm start`'s command, once or crashed and restarted on its data.
export { type LocalProcess, startLocalProcess } from './local-process';
// Where the cloud keeps what it fetches and makes (git-ignored): jars, assemblies, function logs.
export { CACHE_DIR } from './maven';
// Its counters over HTTP (GET /_local/stats), from any process.
export { type LocalStats, readLocalStats } from './stats';
// Settings the admin API accepts, checked as it checks them: Step Functions task faults (`--faults`),
// DynamoDB refusals (POST /_local/faults/dynamodb), duplicate delivery (POST /_local/faults/duplicates).
export { type FaultRule, parseFaults } from './stepfunctions';
// The saga console's model of a state machine (its pure view is the `./saga-view` subpath export).
export type { AslDefinition } from './stepfunctions/definitions';
export { filterPatterns, passesFilters } from './streams';
// The environment that runs a child's Node scripts on the project's Node 22.
export { withThisNode } from './this-node';
