import { resolve } from 'node:path';
import { readAssembly, resolver } from '../assembly';
import { compilePolicies, type PrincipalPolicies } from '../iam';
import { dynamoAuthorizations } from '../iam-actions';
import { LocalPrincipals } from '../principals';

/**
 * What IAM enforced locally costs per call: the check the AWS endpoint makes
 * on a function's DynamoDB request before the engine runs it (parse the
 * body, list the (action, resource) pairs, decide each from the principal's
 * cache), measured on the real template's roles (a cloud assembly: default
 * ./cdk.out, as `npm start` synthesizes it) for the calls the app makes
 * most: a PutItem, a consistent Query, a two-item TransactWriteItems. Also
 * the first (uncached) decision, over a fresh principal each time.
 *
 *   npx tsx local/bench/iam.ts [--calls 200000] [assembly dir]
 */
const args = process.argv.slice(2);
const callsAt = args.indexOf('--calls');
const calls = callsAt >= 0 ? Number(args[callsAt + 1]) : 200_000;
const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--calls') ?? resolve('cdk.out');

const assembly = readAssembly(dir);
// A stream ARN per table, in DynamoDB's form (the policies of stream consumers name them).
const streams = new Map(
  Object.keys(assembly.template.Resources).map((id) => [
    id,
    `arn:aws:dynamodb:us-east-1:000000000000:table/${id}/stream/x`,
  ]),
);
const principals = new LocalPrincipals(assembly, resolver(assembly, streams));
const functionId = Object.keys(assembly.template.Resources).find((id) => id.startsWith('SagaStepsFunction'))!;
const table = Object.keys(assembly.template.Resources).find((id) => id.startsWith('OrdersEventsTable'))!;
const other = Object.keys(assembly.template.Resources).find((id) => id.startsWith('InventoryEventsTable'))!;
const policies: PrincipalPolicies = principals.functionPolicies(functionId);

const bodies: Record<string, string> = {
  PutItem: JSON.stringify({ TableName: table, Item: { aggregateId: { S: 'ord_1' }, version: { N: '1' } } }),
  Query: JSON.stringify({
    TableName: table,
    KeyConditionExpression: 'aggregateId = :id',
    ExpressionAttributeValues: { ':id': { S: 'ord_1' } },
    ConsistentRead: true,
  }),
  TransactWriteItems: JSON.stringify({
    TransactItems: [
      { Put: { TableName: table, Item: { aggregateId: { S: 'ord_1' }, version: { N: '2' } } } },
      { Update: { TableName: other, Key: { aggregateId: { S: 'prd_1' } }, UpdateExpression: 'SET a = :a' } },
    ],
  }),
};

const principal = compilePolicies(policies);
const check = (operation: string, body: string) => {
  for (const { action, resource } of dynamoAuthorizations(operation, JSON.parse(body))) {
    if (principal.decide(action, resource) !== 'allowed') throw new Error(`${action} on ${resource} denied`);
  }
};

console.log(`${functionId}: ${policies.policies.length} policies, ${calls} calls per operation`);
for (const [operation, body] of Object.entries(bodies)) {
  for (let i = 0; i < 10_000; i++) check(operation, body); // warm-up (JIT, cache)
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) check(operation, body);
  const ns = Number(process.hrtime.bigint() - t0) / calls;
  console.log(`${operation.padEnd(20)} ${(ns / 1000).toFixed(2)} µs per call (parse + decide, cached)`);
}
const fresh = 2_000;
const t0 = process.hrtime.bigint();
for (let i = 0; i < fresh; i++)
  compilePolicies(policies).decide(
    'dynamodb:PutItem',
    `arn:aws:dynamodb:us-east-1:000000000000:table/${table}`,
  );
const ns = Number(process.hrtime.bigint() - t0) / fresh;
console.log(
  `${'compile + 1st decide'.padEnd(20)} ${(ns / 1000).toFixed(2)} µs (once per sandbox, then once per new (action, resource))`,
);
