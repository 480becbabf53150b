import { formatLine, lineFilter } from '../../follow-logs';
import { parseLogLine } from '../../logs';

const parseLine = (functionName: string, text: string) => parseLogLine(text, functionName);

const line = (functionName: string, fields: Record<string, unknown>) =>
  parseLine(
    functionName,
    JSON.stringify({ timestamp: '2026-11-28T12:00:00.123Z', level: 'INFO', ...fields }),
  );

describe('following one request through the logs', () => {
  test("shows every line of the invocations that carried the request's correlation id, and no other", () => {
    const show = lineFilter({ correlationId: 'corr-1' });
    const lines = [
      line('OrdersApiFunction', { message: 'cold start work', function_request_id: 'req-a' }),
      line('OrdersApiFunction', {
        message: 'answered',
        function_request_id: 'req-a',
        correlationId: 'corr-1',
      }),
      line('OrdersApiFunction', {
        message: 'answered',
        function_request_id: 'req-b',
        correlationId: 'corr-2',
      }),
      line('SagaStepsFunction', {
        message: 'saga step done',
        function_request_id: 'req-c',
        correlationId: 'corr-1',
      }),
      line('SagaStepsFunction', { message: 'after', function_request_id: 'req-c' }),
      parseLine('SagaStepsFunction', 'not JSON at all'),
    ];
    expect(lines.filter(show).map((l) => `${l.functionName} ${l.fields?.message}`)).toEqual([
      'OrdersApiFunction answered',
      'SagaStepsFunction saga step done',
      'SagaStepsFunction after',
    ]);
  });

  test('filters by part of a function name, in any case, and by Lambda request id', () => {
    const lines = [
      line('OrdersApiFunction4EFA4FB8', { message: 'a', function_request_id: 'r1' }),
      line('SagaStepsFunction37FF724C', { message: 'b', function_request_id: 'r2' }),
    ];
    expect(lines.filter(lineFilter({ functionName: 'saga' })).map((l) => l.fields?.message)).toEqual(['b']);
    expect(lines.filter(lineFilter({ requestId: 'r1' })).map((l) => l.fields?.message)).toEqual(['a']);
  });

  test('formats a line as time, function, level, message and its other keys', () => {
    expect(
      formatLine(
        line('SagaStepsFunction', { message: 'saga step done', correlationId: 'c', service: 'saga' }),
      ),
    ).toBe('12:00:00.123 SagaStepsFunction INFO saga step done  correlationId=c');
    expect(formatLine(parseLine('F', 'plain text'))).toBe('F plain text');
  });
});
