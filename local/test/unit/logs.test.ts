import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineMatches, logsAnswer, parseLogLine, readLogLines, resolveFunction } from '../../logs';

/**
 * The functions' log files as the local runtime writes them (one per function,
 * JSON lines stamped with the invocation's `requestId`), read by request id and
 * by correlation id, and served as `GET /_local/logs`.
 */

let dir: string;

const powertools = (time: string, message: string, extra: Record<string, unknown>) =>
  JSON.stringify({ level: 'INFO', message, timestamp: time, service: 'saga', ...extra });
const emf = (ms: number, metric: string, requestId: string) =>
  JSON.stringify({
    _aws: {
      Timestamp: ms,
      CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['service']], Metrics: [{ Name: metric }] }],
    },
    service: 'saga',
    [metric]: 1,
    requestId,
  });
const at = (s: number) => Date.UTC(2026, 10, 28, 12, 0, s);
const iso = (s: number) => new Date(at(s)).toISOString();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'local-logs-'));
  writeFileSync(
    join(dir, 'SagaStepsFunction37FF724C.log'),
    [
      emf(at(1), 'SagaStarted', 'req-a'),
      powertools(iso(2), 'saga step failed', { correlationId: 'corr-1', requestId: 'req-b' }),
      'Error: a stack trace line, not JSON',
      emf(at(4), 'SagaConfirmed', 'req-c'),
      '{"broken json',
      powertools(iso(5), 'with the Lambda context', {
        function_request_id: 'req-d',
        correlation_id: 'corr-2',
      }),
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'OrdersApiFunction4EFA4FB8.log'),
    `${[
      powertools(iso(0), 'order placed', { correlationId: 'corr-1', requestId: 'req-api' }),
      powertools(iso(3), 'waited for the order to be final', {
        correlationId: 'corr-1',
        requestId: 'req-api',
      }),
    ].join('\n')}\n`,
  );
  writeFileSync(join(dir, 'SagaSweeperFunction7AB547C3.log'), '');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading the functions log lines', () => {
  test('a line: its time, request id, correlation id, level and message, from the keys Powertools and the runtime write', () => {
    expect(parseLogLine(emf(at(1), 'SagaStarted', 'req-a'), 'F')).toMatchObject({
      functionName: 'F',
      time: at(1),
      requestId: 'req-a',
    });
    expect(
      parseLogLine(powertools(iso(5), 'm', { function_request_id: 'req-d', correlation_id: 'corr-2' }), 'F'),
    ).toMatchObject({
      time: at(5),
      requestId: 'req-d',
      correlationId: 'corr-2',
      level: 'INFO',
      message: 'm',
    });
    expect(parseLogLine('plain text', 'F')).toEqual({ functionName: 'F', text: 'plain text' });
    expect(parseLogLine('{"broken', 'F')).toEqual({ functionName: 'F', text: '{"broken' });
    expect(parseLogLine('[1,2]', 'F')).toEqual({ functionName: 'F', text: '[1,2]' });
  });

  test("one invocation's lines, by its request id (EMF documents included)", async () => {
    const lines = await readLogLines({ logDir: dir, requestId: 'req-c' });
    expect(lines.map((l) => [l.functionName, l.requestId, l.time])).toEqual([
      ['SagaStepsFunction37FF724C', 'req-c', at(4)],
    ]);
    // Several request ids (a state's attempts), Powertools' function_request_id among them.
    const several = await readLogLines({ logDir: dir, requestId: ['req-a', 'req-d'] });
    expect(several.map((l) => l.requestId)).toEqual(['req-a', 'req-d']);
  });

  test("one request's lines across functions, by correlation id, in the order they were written", async () => {
    const lines = await readLogLines({ logDir: dir, correlationId: 'corr-1' });
    expect(lines.map((l) => [l.functionName, l.message])).toEqual([
      ['OrdersApiFunction4EFA4FB8', 'order placed'],
      ['SagaStepsFunction37FF724C', 'saga step failed'],
      ['OrdersApiFunction4EFA4FB8', 'waited for the order to be final'],
    ]);
    // With request ids as well, a line with either matches: the correlation id's and the invocations' lines.
    const both = await readLogLines({ logDir: dir, correlationId: 'corr-1', requestId: ['req-a', 'req-c'] });
    expect(both.map((l) => l.time)).toEqual([at(0), at(1), at(2), at(3), at(4)]);
  });

  test('one function (by its logical id or a prefix naming one), and a time window', async () => {
    const saga = await readLogLines({ logDir: dir, functionName: 'SagaSteps', correlationId: 'corr-1' });
    expect(saga.map((l) => l.message)).toEqual(['saga step failed']);
    const all = await readLogLines({ logDir: dir, functionName: 'SagaStepsFunction37FF724C' });
    // Every line of the file, those that are not JSON included, in file order.
    expect(all.map((l) => l.text.slice(0, 12))).toEqual([
      '{"_aws":{"Ti',
      '{"level":"IN',
      'Error: a sta',
      '{"_aws":{"Ti',
      '{"broken jso',
      '{"level":"IN',
    ]);
    const window = await readLogLines({ logDir: dir, correlationId: 'corr-1', since: at(1), until: at(2) });
    expect(window.map((l) => l.time)).toEqual([at(2)]);
    await expect(resolveFunction(dir, 'Saga')).rejects.toThrow(
      'Saga names several functions: SagaStepsFunction37FF724C, SagaSweeperFunction7AB547C3',
    );
    await expect(resolveFunction(dir, 'Payments')).rejects.toThrow(
      /no log of a function Payments \(functions: /,
    );
    await expect(resolveFunction(dir, '../SagaSteps')).rejects.toThrow('not a function name');
  });

  test('lineMatches: no filter matches every line; a time bound leaves lines that tell no time in', () => {
    const plain = parseLogLine('plain', 'F');
    expect(lineMatches(plain, {})).toBe(true);
    expect(lineMatches(plain, { since: at(1) })).toBe(true);
    expect(lineMatches(plain, { requestId: 'req-a' })).toBe(false);
  });
});

describe('GET /_local/logs', () => {
  const ask = (query: string) => logsAnswer(dir, new URLSearchParams(query));

  test('answers the lines of the request ids (repeated) or correlation id, oldest first', async () => {
    const answer = await ask('requestId=req-a&requestId=req-c&function=SagaSteps');
    expect(answer.status).toBe(200);
    const body = answer.body as { lines: { requestId: string }[]; truncated: boolean };
    expect(body.lines.map((l) => l.requestId)).toEqual(['req-a', 'req-c']);
    expect(body.truncated).toBe(false);
    const limited = (await ask('correlationId=corr-1&limit=2')).body as {
      lines: unknown[];
      truncated: boolean;
    };
    expect(limited).toMatchObject({ truncated: true });
    expect(limited.lines).toHaveLength(2);
    const since = (await ask(`correlationId=corr-1&since=${iso(1)}`)).body as { lines: unknown[] };
    expect(since.lines).toHaveLength(2);
  });

  test('refuses a query with no request id nor correlation id, an unknown function, a bad time', async () => {
    expect(await ask('')).toEqual({ status: 400, body: { message: 'give a requestId or a correlationId' } });
    expect(await ask('function=SagaSteps')).toMatchObject({ status: 400 });
    expect(await ask('requestId=x&function=Nope')).toMatchObject({ status: 404 });
    expect(await ask('requestId=x&function=..%2Fetc')).toMatchObject({
      status: 404,
      body: { message: 'not a function name: ../etc' },
    });
    expect(await ask('requestId=x&since=yesterday')).toMatchObject({ status: 400 });
  });

  test("without log files (the functions' output on the terminal) it says so", async () => {
    expect(await logsAnswer(undefined, new URLSearchParams('requestId=x'))).toMatchObject({
      status: 404,
      body: { message: expect.stringContaining('--echo-function-logs') },
    });
  });
});
