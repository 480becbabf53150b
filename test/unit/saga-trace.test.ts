import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { sagaTrace } from '../../functions/saga/trace';

let id = 0;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const entered = (name: string, s: number): HistoryEvent =>
  ({
    id: ++id,
    type: 'TaskStateEntered',
    timestamp: at(s),
    stateEnteredEventDetails: { name },
  }) as HistoryEvent;
const exited = (name: string, s: number): HistoryEvent =>
  ({
    id: ++id,
    type: 'TaskStateExited',
    timestamp: at(s),
    stateExitedEventDetails: { name },
  }) as HistoryEvent;
const scheduled = (s: number) => ({ id: ++id, type: 'TaskScheduled', timestamp: at(s) }) as HistoryEvent;
const succeeded = (s: number) => ({ id: ++id, type: 'TaskSucceeded', timestamp: at(s) }) as HistoryEvent;
const failed = (s: number, error: string) =>
  ({
    id: ++id,
    type: 'TaskFailed',
    timestamp: at(s),
    taskFailedEventDetails: { error, cause: 'why' },
  }) as HistoryEvent;

describe('the saga trace', () => {
  test('a confirmed saga: every step once, a retried step counts its attempts', () => {
    const trace = sagaTrace('SUCCEEDED', [
      entered('BeginSaga', 0),
      scheduled(0),
      succeeded(0),
      exited('BeginSaga', 0),
      entered('ReserveStock', 1),
      scheduled(1),
      failed(1, 'TransientError'),
      scheduled(2),
      succeeded(2),
      exited('ReserveStock', 2),
      entered('CapturePayment', 3),
      scheduled(3),
      succeeded(3),
      exited('CapturePayment', 3),
      entered('ConfirmOrder', 4),
      scheduled(4),
      succeeded(4),
      exited('ConfirmOrder', 5),
    ]);
    expect(trace.status).toBe('SUCCEEDED');
    expect(trace.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['BeginSaga', 'SUCCEEDED', 1],
      ['ReserveStock', 'SUCCEEDED', 2],
      ['CapturePayment', 'SUCCEEDED', 1],
      ['ConfirmOrder', 'SUCCEEDED', 1],
    ]);
    expect(trace.steps[1]).not.toHaveProperty('error');
    expect(trace.steps[3]).toMatchObject({ startedAt: at(4).toISOString(), endedAt: at(5).toISOString() });
  });

  test('a compensated saga shows the failed step with its error and every compensation', () => {
    const trace = sagaTrace('SUCCEEDED', [
      entered('CapturePayment', 0),
      scheduled(0),
      failed(0, 'PaymentDeclined'),
      exited('CapturePayment', 0),
      entered('ReleaseStock', 1),
      scheduled(1),
      succeeded(1),
      exited('ReleaseStock', 1),
      entered('CancelOrder', 2),
      scheduled(2),
      succeeded(2),
      exited('CancelOrder', 2),
    ]);
    expect(trace.status).toBe('COMPENSATED');
    expect(trace.steps[0]).toMatchObject({
      name: 'CapturePayment',
      status: 'FAILED',
      attempts: 1,
      error: { error: 'PaymentDeclined', cause: 'why' },
    });
    expect(trace.steps.map((s) => s.name)).toEqual(['CapturePayment', 'ReleaseStock', 'CancelOrder']);
  });

  test('a running saga and a failed execution', () => {
    const running = sagaTrace('RUNNING', [
      entered('ReserveStock', 0),
      scheduled(0),
      failed(0, 'TransientError'),
    ]);
    expect(running.status).toBe('RUNNING');
    expect(running.steps[0]).toMatchObject({ status: 'RUNNING', attempts: 1 });
    expect(running.steps[0]).not.toHaveProperty('endedAt');
    expect(sagaTrace('TIMED_OUT', []).status).toBe('FAILED');
  });
});
