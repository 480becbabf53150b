import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { artilleryScript } from '../../load/artillery';
import * as flashSaleProcessor from '../../load/flash-sale-processor';
import * as mixProcessor from '../../load/processor';
import { ISSUERS } from '../../load/processor';
import { PROFILES } from '../../load/profiles';
import { consolePeriods, progressLine } from '../../load/progress';
import { PAYLOAD_FIELDS, payloadCsv } from '../../load/seed';
import { ensureLoadTools } from '../../load/tools';

const LOAD = join(__dirname, '..', '..', 'load');
// Parsed as Artillery parses them: with its own js-yaml (load/node_modules, installed on first use).
ensureLoadTools();
const yaml = createRequire(join(LOAD, 'package.json'))('js-yaml') as { safeLoad(text: string): unknown };

interface Ensure {
  thresholds?: Record<string, number>[];
  maxErrorRate?: number;
}
interface Environment {
  target?: string;
  phases?: { duration: number; arrivalRate: number }[];
  variables?: Record<string, unknown>;
  ensure?: Ensure;
}
interface Step {
  [key: string]: unknown;
}
interface Script {
  config: {
    processor: string;
    payload?: { path: string; fields: string[]; loadAll?: boolean; name?: string; skipHeader?: boolean };
    variables?: Record<string, unknown>;
    plugins?: Record<string, unknown>;
    environments: Record<string, Environment>;
  };
  before?: { flow: Step[] };
  after?: { flow: Step[] };
  scenarios: { name: string; weight?: number; beforeScenario?: string | string[]; flow: Step[] }[];
}

const SCRIPTS = readdirSync(LOAD).filter((f) => f.endsWith('.yml'));
const script = (file: string) => yaml.safeLoad(readFileSync(join(LOAD, file), 'utf8')) as Script;
const PROCESSORS: Record<string, Record<string, unknown>> = {
  './processor.ts': mixProcessor,
  './flash-sale-processor.ts': flashSaleProcessor,
};

/** Every processor function a script names: hooks of scenarios, requests, loops, before and after. */
function functionsNamed(s: Script): string[] {
  const names: string[] = [];
  const steps = (flow: Step[]) => {
    for (const step of flow) {
      if (typeof step.function === 'string') names.push(step.function);
      if (typeof step.whileTrue === 'string') names.push(step.whileTrue);
      if (Array.isArray(step.loop)) steps(step.loop as Step[]);
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const request = step[method] as Record<string, unknown> | undefined;
        if (!request) continue;
        for (const hook of ['beforeRequest', 'afterResponse'])
          names.push(...[request[hook] ?? []].flat().map(String));
      }
    }
  };
  for (const scenario of s.scenarios) {
    names.push(...[scenario.beforeScenario ?? []].flat());
    steps(scenario.flow);
  }
  if (s.before) steps(s.before.flow);
  if (s.after) steps(s.after.flow);
  return names;
}

test("`npm run load`'s generated mix calls the processor's hooks as load/mix.yml does", () => {
  // Each scenario's hooks by request (the YAML's `authenticate` is the runner's own settings there): a
  // hook left out (the reservation's answer, once) leaves its ledger blind.
  const hooksBy = (s: Script) =>
    Object.fromEntries(
      s.scenarios.map((scenario) => [
        scenario.name,
        functionsNamed({ scenarios: [{ ...scenario, beforeScenario: [] }] } as unknown as Script),
      ]),
    );
  const generated = artilleryScript(PROFILES.mix, 5, 'http://127.0.0.1:1') as unknown as Script;
  const fromYaml = hooksBy(script('mix.yml'));
  for (const [name, hooks] of Object.entries(hooksBy(generated)))
    expect([name, [...new Set(hooks)].sort()]).toEqual([name, [...new Set(fromYaml[name])].sort()]);
});

test('the scripts are the mix, the soak and the flash sale', () => {
  expect(SCRIPTS.sort()).toEqual(['flash-sale.yml', 'mix.yml', 'soak.yml']);
});

describe.each(SCRIPTS)('load/%s', (file) => {
  const s = script(file);

  test('has the environments local, dev, staging and prod, each with a target, phases and ensure', () => {
    expect(Object.keys(s.config.environments).sort()).toEqual(['dev', 'local', 'prod', 'staging']);
    for (const [name, env] of Object.entries(s.config.environments)) {
      // `npm start`'s API (local/main.ts: --port, default 3000); a stage's from the environment.
      expect(env.target).toBe(name === 'local' ? 'http://127.0.0.1:3000' : '{{ $env.COMMERCE_API_URL }}');
      expect(ISSUERS).toContain(env.variables?.issuer);
      expect(env.variables?.issuer).toBe(name === 'local' ? 'local' : 'client-credentials');
      expect(env.phases?.length).toBeGreaterThan(0);
      for (const phase of env.phases ?? []) {
        expect(phase.duration).toBeGreaterThan(0);
        expect(phase.arrivalRate).toBeGreaterThan(0);
      }
      expect(env.ensure?.maxErrorRate).toEqual(expect.any(Number));
      expect(env.ensure?.thresholds?.map((t) => Object.keys(t)[0])).toContain('http.response_time.p95');
    }
    // The ensure plugin runs config.ensure's checks only when it is named (Artillery 2.0.34).
    expect(s.config.plugins).toHaveProperty('ensure');
  });

  test('prod is the shortest and gentlest run', () => {
    const total = (env: Environment) =>
      (env.phases ?? []).reduce((sum, p) => sum + p.duration * p.arrivalRate, 0);
    const { prod, ...others } = s.config.environments;
    for (const env of Object.values(others)) expect(total(prod!)).toBeLessThan(total(env));
    expect(prod!.ensure?.maxErrorRate).toBe(0);
  });

  test('names only functions its processor exports', () => {
    const processor = PROCESSORS[s.config.processor];
    expect(processor).toBeDefined();
    const named = functionsNamed(s);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect([name, typeof processor![name]]).toEqual([name, 'function']);
  });
});

describe.each(['mix.yml', 'soak.yml'])('load/%s', (file) => {
  const s = script(file);
  const profile = PROFILES[file === 'mix.yml' ? 'mix' : 'soak'];

  test('reads the payload npm run seed writes, its fields as seed.ts names them', () => {
    // `npm run seed` writes load/out/seed.json and the CSV beside it (load/cli.ts); paths are the script's.
    expect(s.config.payload).toMatchObject({
      path: 'out/seed.csv',
      skipHeader: true,
      loadAll: true,
      name: 'seeded',
    });
    expect(s.config.payload?.fields).toEqual([...PAYLOAD_FIELDS]);
    const csv = payloadCsv({
      target: 'http://127.0.0.1:3000',
      createdAt: '2026-01-01T00:00:00.000Z',
      customers: [{ customerId: 'cus_1', creditLimitCents: 1, sub: 'seed-1' }],
      products: [
        { productId: 'prd_1', priceCents: 100, stock: 10 },
        { productId: 'prd_2', priceCents: 100, stock: 10 },
      ],
    });
    expect(csv).toBe('customerId,sub,productId\ncus_1,seed-1,prd_1\n,,prd_2\n');
  });

  test("runs profiles.ts's mix: its weights, its polling and its saga limit", () => {
    const weights = Object.fromEntries(s.scenarios.map((sc) => [sc.name, sc.weight]));
    expect(weights).toEqual({
      place_order: profile.weights.placeOrder,
      reserve_stock: profile.weights.reserveStock,
      create_customer: profile.weights.createCustomer,
    });
    expect(s.config.variables).toEqual({
      pollFraction: profile.pollFraction,
      pollIntervalMs: profile.pollIntervalMs,
      sagaLimitMs: profile.sagaLimitSeconds * 1000,
    });
    // ensure's saga.end_to_end.p95 fails when no order was followed (the metric is absent): every
    // environment's run follows some, at least a few expected.
    for (const [name, env] of Object.entries(s.config.environments)) {
      const arrivals = (env.phases ?? []).reduce((sum, p) => sum + p.duration * p.arrivalRate, 0);
      const pollFraction = Number(env.variables?.pollFraction ?? s.config.variables?.pollFraction);
      const followed = (arrivals * profile.weights.placeOrder * pollFraction) / 100;
      expect([name, followed >= 10]).toEqual([name, true]);
    }
    for (const scenario of s.scenarios) expect(scenario.beforeScenario).toBe('authenticate');
  });
});

test("the soak's local run is the profile's: its rate for its 30 minutes", () => {
  const phases = script('soak.yml').config.environments.local!.phases!;
  expect(phases.at(-1)).toMatchObject({
    duration: PROFILES.soak.durationSeconds,
    arrivalRate: PROFILES.soak.levels[0],
  });
});

// Two periods as Artillery 2.0.34 prints them (from a run of mix.yml), then its summary's header.
const CONSOLE = `Phase started: unnamed (index: 0, duration: 20s) 20:17:28(+0000)

--------------------------------------
Metrics for period to: 20:17:30(+0000) (width: 0.839s)
--------------------------------------

http.codes.201: ................................................................ 1
http.request_rate: ............................................................. 3/sec
http.requests: ................................................................. 3
http.response_time:
  min: ......................................................................... 1
  p95: ......................................................................... 37
vusers.failed: ................................................................. 0


--------------------------------------
Metrics for period to: 20:17:40(+0000) (width: 9.65s)
--------------------------------------

errors.ETIMEDOUT: .............................................................. 2
http.requests: ................................................................. 33
http.response_time:
  p95: ......................................................................... 37.7
saga.end_to_end:
  p95: ......................................................................... 228.2
vusers.failed: ................................................................. 2
--------------------------------
Summary report @ 20:17:50(+0000)
--------------------------------

http.requests: ................................................................. 63
`;

test("reads each period of Artillery's console report as it ends, not its summary", () => {
  const lines: string[] = [];
  const periods = consolePeriods((p) => lines.push(progressLine(p)));
  for (const line of CONSOLE.split('\n')) periods.line(line);
  periods.end();
  expect(lines).toEqual([
    '20:17:30(+0000): 3 requests in 1 s, 0 errors, 0 failed, p95 37 ms',
    '20:17:40(+0000): 33 requests in 10 s, 2 errors (ETIMEDOUT × 2), 2 failed, p95 37.7 ms, saga p95 228.2 ms',
  ]);
});
