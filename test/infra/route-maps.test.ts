import { join } from 'node:path';
import type { aws_lambda as lambda } from 'aws-cdk-lib';
import { ServiceFunction } from '../../lib/constructs/service-function';
import { referencedIds, removeSynthesized, resourcesOf, synthStage } from './synth';

/**
 * Each function's route map (its handler's `httpHandler(ROUTES, {...})`)
 * serves exactly the routes the template sends it: a template route its
 * handler lacks would answer 404 in the contract's shape, which the local
 * wiring test cannot tell from a missing id; a handler route with no
 * template route would never be reached.
 */
const FUNCTIONS_DIR = join(__dirname, '..', '..', 'functions');
const { stack, template } = synthStage('dev');
afterAll(removeSynthesized);
const resources = resourcesOf(template);

/** The route keys of the template by the logical id of the function their integration invokes. */
function templateRoutesByFunction(): Map<string, string[]> {
  const byFunction = new Map<string, string[]>();
  for (const route of Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')) {
    const [integrationId] = [...referencedIds(route.Properties?.Target)];
    const integration = resources[integrationId!];
    const [functionId] = [...referencedIds(integration?.Properties?.IntegrationUri)];
    if (!functionId) throw new Error(`route ${String(route.Properties?.RouteKey)} invokes no function`);
    byFunction.set(functionId, [...(byFunction.get(functionId) ?? []), String(route.Properties?.RouteKey)]);
  }
  return byFunction;
}

/** Values a handler module can be loaded with: the template's, a reference made a placeholder. */
function environmentOf(functionId: string): Record<string, string> {
  const variables = (
    resources[functionId]?.Properties?.Environment as { Variables?: Record<string, unknown> }
  )?.Variables;
  return Object.fromEntries(
    Object.entries(variables ?? {}).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `${name}-placeholder`,
    ]),
  );
}

/** The route keys of the handler `entry` exports (none for a handler that is not an HTTP one), loaded with `environment`. */
function handlerRouteKeys(entry: string, environment: Record<string, string>): string[] {
  const saved = { ...process.env };
  Object.assign(process.env, environment);
  try {
    let routeKeys: readonly string[] | undefined;
    jest.isolateModules(() => {
      // A fresh copy of the module, its module scope run with this function's environment.
      const loaded = require(join(FUNCTIONS_DIR, entry)) as { handler: { routeKeys?: readonly string[] } };
      routeKeys = loaded.handler.routeKeys;
    });
    return [...(routeKeys ?? [])].sort();
  } finally {
    for (const name of Object.keys(environment)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

const serviceFunctions = stack.node
  .findAll()
  .filter((c): c is ServiceFunction => c instanceof ServiceFunction);
const routesByFunction = templateRoutesByFunction();
const functionIdOf = (sf: ServiceFunction) =>
  stack.getLogicalId(sf.fn.node.defaultChild as lambda.CfnFunction);

test('every route of the template invokes one of the stack’s functions', () => {
  const known = new Set(serviceFunctions.map(functionIdOf));
  expect([...routesByFunction.keys()].filter((id) => !known.has(id))).toEqual([]);
  expect([...routesByFunction.values()].flat().length).toBeGreaterThan(0);
});

test.each(serviceFunctions.map((sf) => [sf.entry, sf] as const))(
  '%s serves exactly the template’s routes to it',
  (entry, sf) => {
    const id = functionIdOf(sf);
    const templateRoutes = [...(routesByFunction.get(id) ?? [])].sort();
    expect(handlerRouteKeys(entry, environmentOf(id))).toEqual(templateRoutes);
  },
);
