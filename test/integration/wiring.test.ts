import { join } from 'node:path';
import {
  CACHE_DIR,
  NOT_RUN_LOCALLY,
  RUN_LOCALLY,
  readAssembly,
  resourcesOfType,
} from '@commerce/local-cloud';
import { call, callOutsideContract, localAdmin } from '../support/api';

interface Wiring {
  functions: string[];
  routes: string[];
  tables: string[];
  eventSourceMappings: string[];
  rules: string[];
  stateMachines: string[];
  queues: string[];
}

const assembly = readAssembly(join(CACHE_DIR, 'assembly-test'));
const ids = (type: string) =>
  resourcesOfType(assembly.template, type)
    .map(([id]) => id)
    .sort();

describe('the local cloud runs the whole synthesized template', () => {
  let wiring: Wiring;
  beforeAll(async () => {
    wiring = await localAdmin<Wiring>('wiring');
  });

  test('every resource type is either run locally or knowingly has no local counterpart', () => {
    const types = new Set(Object.values(assembly.template.Resources).map((r) => r.Type));
    for (const type of types) expect(RUN_LOCALLY.has(type) || NOT_RUN_LOCALLY.has(type)).toBe(true);
  });

  test.each([
    ['functions', 'AWS::Lambda::Function'],
    ['tables', 'AWS::DynamoDB::Table'],
    ['eventSourceMappings', 'AWS::Lambda::EventSourceMapping'],
    ['rules', 'AWS::Events::Rule'],
    // The saga's ASL loaded by the local interpreter (it refuses a definition it cannot run).
    ['stateMachines', 'AWS::StepFunctions::StateMachine'],
    ['queues', 'AWS::SQS::Queue'],
  ] as const)('every %s of the template is wired', (kind, type) => {
    expect([...wiring[kind]].sort()).toEqual(ids(type));
    expect(wiring[kind].length).toBeGreaterThan(0);
  });

  test('every route of the template is served, and answers from its function', async () => {
    const routeKeys = resourcesOfType(assembly.template, 'AWS::ApiGatewayV2::Route')
      .map(([, r]) => String(r.Properties?.RouteKey))
      .sort();
    expect([...wiring.routes].sort()).toEqual(routeKeys);
    for (const key of routeKeys) {
      const [method, path] = key.split(' ') as [string, string];
      const concrete = path.replace(
        /\{(\w+)\}/g,
        (_, name: string) => `${name.replace(/Id$/, '').slice(0, 3)}_0`,
      );
      const response = await call(method, concrete, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect(response.status).toBeLessThan(500);
      // The function answered: in the contract's error shape (the router alone would say {"message":"Not Found"}),
      // or, on a route that takes no id nor body (the API's document and page), with its 200.
      if (response.status === 200) expect(key).toMatch(/^GET \/[^{}]*$/);
      else expect(response.body).toHaveProperty('error.code');
      expect(response.headers.get('x-correlation-id')).toBeTruthy();
    }
  });

  test('an unknown route gets API Gateway’s 404', async () => {
    const response = await callOutsideContract('GET', '/nowhere');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: 'Not Found' });
  });
});
