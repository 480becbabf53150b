import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';

/** Every line Powertools writes (JSON lines, through a Console of its own: metrics and info to stdout, warnings to stderr). */
function capturedLines(run: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  const writes = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation(capture),
  );
  try {
    run();
  } finally {
    for (const write of writes) write.mockRestore();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

const context = {
  functionName: 'OrdersApiFunction',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:OrdersApiFunction',
  memoryLimitInMB: '1024',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

describe('startInvocation', () => {
  let powertools: typeof import('../../functions/shared/powertools');
  beforeAll(() => {
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'Commerce/test';
    process.env.POWERTOOLS_SERVICE_NAME = 'orders';
    // As Lambda sets it: Powertools counts a cold start only in an on-demand environment.
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    jest.isolateModules(() => {
      powertools = require('../../functions/shared/powertools');
    });
  });

  test("puts the Lambda context on every log line and emits ColdStart on a sandbox's first invocation only", () => {
    const first = capturedLines(() => {
      powertools.startInvocation(context);
      powertools.logger.warn('first');
    });
    const coldStarts = first.filter((line) => 'ColdStart' in line);
    expect(coldStarts).toHaveLength(1);
    expect(coldStarts[0]).toMatchObject({ ColdStart: 1, function_name: 'OrdersApiFunction' });
    expect(first.find((line) => line.message === 'first')).toMatchObject({
      function_name: 'OrdersApiFunction',
      function_request_id: context.awsRequestId,
      cold_start: true,
    });

    const second = capturedLines(() => {
      powertools.startInvocation({ ...context, awsRequestId: 'second-request' });
      powertools.logger.warn('second');
    });
    expect(second.filter((line) => 'ColdStart' in line)).toHaveLength(0);
    expect(second.find((line) => line.message === 'second')).toMatchObject({
      function_request_id: 'second-request',
      cold_start: false,
    });
  });
});

describe('every handler', () => {
  /** The modules the stack deploys as functions (lib/services name them by these paths). */
  const handlerFiles = () => {
    const root = join(__dirname, '../../functions');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
      (file) => /(^|\/)handlers\/[^/]+\.ts$/.test(file) || /^saga\/(handler|sweeper)\.ts$/.test(file),
    );
    return files.map((file) => join(root, file));
  };

  test('starts each invocation with startInvocation, directly or through the shared wrappers that do', () => {
    const wrappers = ['httpHandler(', 'sagaSteps(', 'projector('];
    const files = handlerFiles();
    expect(files.length).toBeGreaterThanOrEqual(9);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      const handler = source.slice(source.indexOf('export const handler'));
      const started =
        wrappers.some((wrapper) => handler.startsWith(`export const handler = ${wrapper}`)) ||
        /^export const handler = async \([\s\S]*?\)[\s\S]*?=>\s*\{\s*startInvocation\(context\);/.test(
          handler,
        );
      expect({ file, started }).toEqual({ file, started: true });
    }
    for (const [file, wrapper] of [
      ['shared/http.ts', 'httpHandler'],
      ['shared/views.ts', 'projector'],
      ['saga/steps.ts', 'sagaSteps'],
    ] as const) {
      const source = readFileSync(join(__dirname, '../../functions', file), 'utf8');
      const body = source.slice(source.indexOf(`export function ${wrapper}`));
      expect(body.slice(0, 1200)).toContain('startInvocation(context);');
    }
  });
});
