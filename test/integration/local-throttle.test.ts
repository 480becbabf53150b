import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Assembly } from '../../local/assembly';
import { LocalHttpApi, type RouteSpec } from '../../local/http-api';
import {
  FunctionError,
  LambdaRuntime,
  SANDBOX_CONCURRENCY,
  THROTTLED_ERROR,
} from '../../local/lambda/runtime';
import { stageThrottles, TokenBucket } from '../../local/throttle';

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

  test('a sandbox refuses invocations beyond the reserved concurrency, as Lambda throttles', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reserved-'));
    writeFileSync(
      join(dir, 'index.js'),
      'exports.handler = () => new Promise((resolve) => setTimeout(() => resolve("done"), 300));',
    );
    const runtime = new LambdaRuntime(
      [
        {
          logicalId: 'Slow',
          codeDir: dir,
          handler: 'index.handler',
          timeoutMs: 5_000,
          memoryMb: 128,
          reservedConcurrency: 1,
          environment: {},
        },
      ],
      join(dir, 'logs'),
    );
    try {
      const outcomes = await Promise.allSettled([runtime.invoke('Slow', {}), runtime.invoke('Slow', {})]);
      expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'done' });
      expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { errorType: THROTTLED_ERROR } });
      expect(await runtime.invoke('Slow', {})).toBe('done');
    } finally {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a sandbox runs a bounded number of invocations at once; the rest wait their turn, then all succeed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turns-'));
    writeFileSync(
      join(dir, 'index.js'),
      [
        'let running = 0;',
        'let most = 0;',
        'exports.handler = async () => {',
        '  most = Math.max(most, ++running);',
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
    const runtime = new LambdaRuntime([{ ...spec, timeoutMs: 5_000 }], join(dir, 'logs'));
    try {
      const burst = SANDBOX_CONCURRENCY * 3;
      const mosts = (await Promise.all(
        Array.from({ length: burst }, () => runtime.invoke('Turns', {})),
      )) as number[];
      expect(mosts).toHaveLength(burst);
      expect(Math.max(...mosts)).toBe(SANDBOX_CONCURRENCY);
    } finally {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
