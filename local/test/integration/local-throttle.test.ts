import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Assembly } from '../../assembly';
import { LocalHttpApi, type RouteSpec } from '../../http-api';
import {
  FunctionError,
  LambdaRuntime,
  type LambdaRuntimeOptions,
  QueueWaitExceeded,
  THROTTLED_ERROR,
} from '../../lambda/runtime';
import { stageThrottles, TokenBucket } from '../../throttle';

const templateWith = (stage: Record<string, unknown>) =>
  ({
    dir: '.',
    template: { Resources: { Stage: { Type: 'AWS::ApiGatewayV2::Stage', Properties: stage } } },
  }) as unknown as Assembly;

describe("the local HTTP API's throttling", () => {
  test('a token bucket holds its burst and refills at its rate', () => {
    const bucket = new TokenBucket({ rate: 10, burst: 2 }, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([true, true, false]);
    expect(bucket.take(50)).toBe(false);
    expect(bucket.take(100)).toBe(true);
    expect(bucket.take(100)).toBe(false);
  });

  test("a route's throttle is the stage default, overridden by its route settings", () => {
    const throttleOf = stageThrottles(
      templateWith({
        DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
        RouteSettings: { 'POST /orders': { ThrottlingRateLimit: 50 } },
      }),
    );
    expect(throttleOf('GET /orders/{orderId}')).toEqual({ rate: 100, burst: 200 });
    expect(throttleOf('POST /orders')).toEqual({ rate: 50, burst: 200 });
    expect(stageThrottles(templateWith({}))('POST /orders')).toBeUndefined();
  });

  async function apiWith(invoke: LambdaRuntime['invoke'], throttle?: RouteSpec['throttle']) {
    const route: RouteSpec = {
      logicalId: 'Route',
      routeKey: 'POST /orders',
      method: 'POST',
      functionId: 'Fn',
      matcher: /^\/orders$/,
      parameterNames: [],
      literalSegments: 1,
      ...(throttle ? { throttle } : {}),
      authorization: { type: 'NONE' },
    };
    const api = new LocalHttpApi([route], { invoke } as LambdaRuntime, () => undefined);
    await api.start(0);
    const post = async () => {
      const response = await fetch(`http://127.0.0.1:${api.port}/orders`, { method: 'POST', body: '{}' });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.json(),
      };
    };
    return { api, post };
  }

  test('past its burst, a route answers 429 THROTTLED in the contract shape, without invoking', async () => {
    let invocations = 0;
    const { api, post } = await apiWith(
      async () => {
        invocations++;
        return { statusCode: 202, body: '{}' };
      },
      { rate: 0.001, burst: 2 },
    );
    try {
      const answers = [await post(), await post(), await post()];
      expect(answers.map((a) => a.status)).toEqual([202, 202, 429]);
      expect(answers[2]).toMatchObject({ retryAfter: '1', body: { error: { code: 'THROTTLED' } } });
      expect(invocations).toBe(2);
    } finally {
      await api.stop();
    }
  });

  test('a function at its reserved concurrency is answered 429 THROTTLED, not 5xx', async () => {
    const { api, post } = await apiWith(async () => {
      throw new FunctionError('Fn', THROTTLED_ERROR, 'Rate Exceeded.');
    });
    try {
      expect(await post()).toMatchObject({ status: 429, body: { error: { code: 'THROTTLED' } } });
    } finally {
      await api.stop();
    }
  });

  /**
   * Runs `use` on a runtime of `functions`, each a handler of `source` (a 5 s timeout and 128 MB, its
   * spec extended by its entry), with `options`; the code and logs are removed after.
   */
  async function withFunctions(
    source: string,
    functions: readonly { logicalId: string; reservedConcurrency?: number }[],
    options: LambdaRuntimeOptions,
    use: (runtime: LambdaRuntime) => Promise<void>,
  ) {
    const dir = mkdtempSync(join(tmpdir(), 'functions-'));
    writeFileSync(join(dir, 'index.js'), source);
    const runtime = new LambdaRuntime(
      functions.map((f) => ({
        codeDir: dir,
        handler: 'index.handler',
        timeoutMs: 5_000,
        memoryMb: 128,
        environment: {},
        ...f,
      })),
      join(dir, 'logs'),
      options,
    );
    try {
      await use(runtime);
    } finally {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('a sandbox refuses invocations beyond the reserved concurrency, as Lambda throttles', () =>
    withFunctions(
      'exports.handler = () => new Promise((resolve) => setTimeout(() => resolve("done"), 300));',
      [{ logicalId: 'Slow', reservedConcurrency: 1 }],
      {},
      async (runtime) => {
        const outcomes = await Promise.allSettled([runtime.invoke('Slow', {}), runtime.invoke('Slow', {})]);
        expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'done' });
        expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { errorType: THROTTLED_ERROR } });
        expect(await runtime.invoke('Slow', {})).toBe('done');
      },
    ));

  test('an invocation bounded in its wait for a sandbox leaves the queue unrun once the bound passes', () =>
    withFunctions(
      'let runs = 0;\nexports.handler = () => new Promise((resolve) => setTimeout(() => resolve(++runs), 400));',
      [{ logicalId: 'Slow' }],
      { maxSandboxesPerFunction: 1 },
      async (runtime) => {
        await runtime.warm(['Slow']);
        const [first, bounded, unbounded] = await Promise.allSettled([
          runtime.invoke('Slow', {}),
          runtime.invoke('Slow', {}, { maxQueueWaitMs: 100 }),
          runtime.invoke('Slow', {}),
        ]);
        expect(first).toEqual({ status: 'fulfilled', value: 1 });
        // Refused as Lambda throttles, having never run: the invocation queued behind it runs second.
        expect(bounded).toMatchObject({ status: 'rejected', reason: { errorType: THROTTLED_ERROR } });
        expect((bounded as PromiseRejectedResult).reason).toBeInstanceOf(QueueWaitExceeded);
        expect(unbounded).toEqual({ status: 'fulfilled', value: 2 });
        expect(runtime.sandboxes().Slow).toMatchObject({ invocations: 2, queueTimeouts: 1, overlaps: 0 });
      },
    ));

  test("a function's sandboxes run one invocation each at a time; the rest wait their turn, then all succeed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turns-'));
    writeFileSync(
      join(dir, 'index.js'),
      [
        'const { existsSync, readdirSync, writeFileSync } = require("node:fs");',
        'const { threadId } = require("node:worker_threads");',
        'let running = 0;',
        'let most = 0;',
        'exports.handler = async () => {',
        '  most = Math.max(most, ++running);',
        "  // A sandbox's first invocation holds it until all three run one: however slowly",
        '  // a busy host starts the third, the burst cannot finish in the first two alone.',
        '  const mark = __dirname + "/running." + threadId;',
        '  if (!existsSync(mark)) writeFileSync(mark, "");',
        '  const until = Date.now() + 4000;',
        '  while (readdirSync(__dirname).filter((f) => f.startsWith("running.")).length < 3 && Date.now() < until)',
        '    await new Promise((resolve) => setTimeout(resolve, 10));',
        '  await new Promise((resolve) => setTimeout(resolve, 50));',
        '  running--;',
        '  return most;',
        '};',
      ].join('\n'),
    );
    const spec = {
      logicalId: 'Turns',
      codeDir: dir,
      handler: 'index.handler',
      memoryMb: 128,
      environment: {},
    };
    const runtime = new LambdaRuntime([{ ...spec, timeoutMs: 5_000 }], join(dir, 'logs'), {
      maxSandboxesPerFunction: 3,
    });
    try {
      const burst = 30;
      const mosts = (await Promise.all(
        Array.from({ length: burst }, () => runtime.invoke('Turns', {})),
      )) as number[];
      expect(mosts).toHaveLength(burst);
      // Module state is per sandbox: no sandbox ever saw two invocations at once.
      expect(Math.max(...mosts)).toBe(1);
      expect(runtime.sandboxes().Turns).toMatchObject({
        cap: 3,
        sandboxes: 3,
        started: 3,
        used: 3,
        invocations: burst,
        overlaps: 0,
      });
    } finally {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a sandbox whose invocation timed out takes no other: it is replaced, and idle extra sandboxes are stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'timeout-'));
    writeFileSync(
      join(dir, 'index.js'),
      [
        'const { existsSync, writeFileSync } = require("node:fs");',
        'let running = 0;',
        'exports.handler = async (event) => {',
        '  running++;',
        '  if (running > 1) throw new Error("two invocations at once");',
        '  if (event.latch) {',
        '    // Says it runs, then holds its sandbox until the test lets it go (or event.ms passes).',
        '    writeFileSync(event.latch + "." + process.pid, "");',
        '    const until = Date.now() + event.ms;',
        '    while (!existsSync(event.latch) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));',
        '  } else await new Promise((resolve) => setTimeout(resolve, event.ms));',
        '  running--;',
        '  return "done";',
        '};',
      ].join('\n'),
    );
    const spec = {
      logicalId: 'Hangs',
      codeDir: dir,
      handler: 'index.handler',
      memoryMb: 128,
      environment: {},
    };
    const runtime = new LambdaRuntime([{ ...spec, timeoutMs: 300 }], join(dir, 'logs'), {
      maxSandboxesPerFunction: 1,
      idleMs: 200,
    });
    try {
      await expect(runtime.invoke('Hangs', { ms: 2_000 })).rejects.toMatchObject({
        errorType: 'Sandbox.Timedout',
      });
      // The cap is one sandbox: the next invocation gets a new one, not the one still running.
      expect(await runtime.invoke('Hangs', { ms: 10 })).toBe('done');
      expect(runtime.sandboxes().Hangs).toMatchObject({ started: 2, replacedAfterTimeout: 1, overlaps: 0 });
    } finally {
      await runtime.stop();
    }
    const pooled = new LambdaRuntime([{ ...spec, timeoutMs: 5_000 }], join(dir, 'logs'), {
      maxSandboxesPerFunction: 4,
      idleMs: 200,
      // A pool grows one start at a time: with no wait required, four long invocations get four.
      startAfterWaitMs: 0,
    });
    try {
      // Each invocation holds its sandbox until all four run (however slowly sandboxes start here).
      const latch = join(dir, 'release');
      const running = () => readdirSync(dir).filter((f) => f.startsWith('release.')).length;
      const invocations = Promise.all(
        Array.from({ length: 4 }, () => pooled.invoke('Hangs', { ms: 4_000, latch })),
      );
      const deadline = Date.now() + 4_000;
      while (running() < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      writeFileSync(latch, '');
      await invocations;
      expect(pooled.sandboxes().Hangs).toMatchObject({ sandboxes: 4 });
      // Like Lambda reclaiming environments: all but one go once idle long enough.
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(pooled.sandboxes().Hangs).toMatchObject({ sandboxes: 1, reclaimed: 3 });
    } finally {
      await pooled.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /**
   * Runs `body` on a runtime of two functions A and B (each invocation the event's `ms`, else 50 ms)
   * under a total cap of three sandboxes, with `evictableAfterMs`; `total` counts the sandboxes of both.
   * A pool grows one start at a time, so a burst that is to grow one runs long invocations.
   */
  const atTotalCap = (
    evictableAfterMs: number,
    body: (runtime: LambdaRuntime, total: () => number) => Promise<void>,
  ) =>
    withFunctions(
      'exports.handler = (e) => new Promise((resolve) => setTimeout(() => resolve("done"), e.ms ?? 50));',
      [{ logicalId: 'A' }, { logicalId: 'B' }],
      { maxSandboxesPerFunction: 4, maxSandboxes: 3, evictableAfterMs, startAfterWaitMs: 0 },
      (runtime) =>
        body(runtime, () => Object.values(runtime.sandboxes()).reduce((n, p) => n + p.sandboxes, 0)),
    );

  test('the sandboxes of all functions stay within the total cap: an idle extra one of another function makes room', () =>
    // A's sandboxes are seconds old at most: taking them must not wait for their age here.
    atTotalCap(0, async (runtime, total) => {
      await Promise.all(Array.from({ length: 10 }, () => runtime.invoke('A', { ms: 1_000 })));
      expect(runtime.sandboxes().A).toMatchObject({ sandboxes: 3 });
      // B's queue lasts past the wait that takes another function's room (500 ms), so it grows.
      await Promise.all(Array.from({ length: 10 }, () => runtime.invoke('B', { ms: 300 })));
      expect(total()).toBeLessThanOrEqual(3);
      expect(runtime.sandboxes().A!.reclaimed).toBeGreaterThanOrEqual(1);
      expect(runtime.sandboxes().B!.sandboxes).toBeGreaterThanOrEqual(2);
    }));

  test('at the total cap, a young sandbox is taken only for a function that has none: the room a start bought is kept a while', () =>
    atTotalCap(60_000, async (runtime) => {
      await Promise.all(Array.from({ length: 10 }, () => runtime.invoke('A', { ms: 1_000 })));
      expect(runtime.sandboxes().A).toMatchObject({ sandboxes: 3 });
      // B has no sandbox: it takes one of A's at once, young as it is; with that one it serves its
      // queue, and A's others (younger than a minute) stay.
      await expect(
        Promise.all(Array.from({ length: 10 }, () => runtime.invoke('B', {}))),
      ).resolves.toHaveLength(10);
      expect(runtime.sandboxes().A).toMatchObject({ sandboxes: 2, reclaimed: 1 });
      expect(runtime.sandboxes().B).toMatchObject({ sandboxes: 1, invocations: 10 });
    }));
});
