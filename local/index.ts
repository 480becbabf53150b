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
 * beside it: the cloud as a child process (`npm start`'s command), the
 * DynamoDB engine on its own, the assembly reader, and the checks behind the cloud's
 * fault and filter settings. Nothing else of the package is public.
 */

// The exports are in the order of their files (the formatter keeps them so); what each is for is in README.md.

// The cloud assembly as the cloud reads it.
export { type Assembly, type Resource, readAssembly, resourcesOfType, type Template } from './assembly';
// Where the cloud keeps what it fetches and makes (git-ignored): jars, assemblies, function logs.
export { CACHE_DIR } from './cache-dir';
// The cloud in this process: started from an assembly; its endpoints, counters, reload and stop.
export { type LocalCloud, type LocalCloudOptions, startLocalCloud } from './cloud';
// The cloud as a process group on a data directory, to crash and restart (`npm start`'s command).
export { CloudProcess, type CloudProcessOptions } from './cloud-process';
// The tools' command lines: one table of options per command makes its parser and its --help.
export {
  asksForHelp,
  type CommandSpec,
  helpText,
  type OptionSpec,
  parseCommandLine,
  usageError,
  type Values,
} from './command-line';
// Where the cloud's CPU time went (part of its counters).
export type { CpuTimes } from './cpu';
// Poison stream records and failing rule targets, as POST /_local/faults/deliveries accepts them.
export {
  type DeliveryFaults,
  PoisonRecords,
  targetFails,
  validateDeliveryFaults,
} from './delivery-faults';
// Duplicate delivery as POST /_local/faults/duplicates accepts it.
export { type DuplicateDelivery, validateDuplicates } from './duplicates';
// The DynamoDB engine alone on a port of its own, for a store's tests and the conformance suite.
export { type LocalDynamoDb, startDynamoDb } from './dynamodb';
// An EventBridge event pattern (and a stream filter's), as the cloud applies it.
export type { EventPattern } from './eventbridge/pattern';
// PutEvents refused in part or whole, as POST /_local/faults/eventbridge accepts them.
export {
  type PutEventsFaults,
  refuses as putEventsRefuses,
  validatePutEventsFaults,
} from './eventbridge/put-faults';
// AWS's own matcher, event-ruler (Java), on a file of cases: what the cloud's matcher is checked against.
export { type RulerResult, rulerVerdicts } from './eventbridge/ruler';
// `npm run logs`'s command line: its options and their help (follow-logs.ts parses it).
export { LOGS_COMMAND } from './follow-logs';
// Each function's fresh sandbox timed (bundle loaded, handler resolved): `npm run cold-start`.
export { type ColdStart, type ColdStartOptions, timeColdStarts } from './lambda/cold-start';
// DynamoDB refusals and lost answers as POST /_local/faults/dynamodb accepts them, and the refusal AWS would send.
export {
  awsRefusal,
  callKey,
  type DynamoFaultRule,
  type LostAnswerRule,
  type LostAnswers,
  lostAnswerFor,
  refusalFor,
  validateDynamoFaults,
} from './lambda/dynamo-faults';
// Functions dying with their invocation as POST /_local/faults/functions accepts them, and the draw.
export { type FunctionDeathRule, FunctionDeaths, validateFunctionDeaths } from './lambda/function-deaths';
// The cloud as `npm start` runs it, in a child process.
export { type LocalProcess, startLocalProcess } from './local-process';
// The functions' log lines of one request, by request id or correlation id (GET /_local/logs, the logs CLI).
export { type LogLine, type LogQuery, parseLogLine, readLogLines } from './logs';
// The resource types the cloud runs, and those it knows it need not run (a test checks the template's).
export { NOT_RUN_LOCALLY, RUN_LOCALLY } from './resource-types';
// `npm start`'s command line: its options and their help (main.ts parses it).
export { START_COMMAND } from './start-command';
// Its counters over HTTP (GET /_local/stats), from any process.
export { type LocalStats, readLocalStats } from './stats';
// Step Functions task faults (`--faults`, POST /_local/faults).
export { type FaultRule, parseFaults } from './stepfunctions';
// The saga console's model of a state machine (its pure view is the `./saga-view` subpath export).
export type { AslDefinition } from './stepfunctions/definitions';
// Stream filters as the pollers apply them.
export { filterPatterns, passesFilters } from './stream-mappings';
// The environment that runs a child's Node scripts on the Node running this process (the project's Node 22).
export { withThisNode } from './this-node';
