import type { AslDefinition } from '@commerce/local-cloud';
import {
  type ExecutionLike,
  executionFilter,
  executionRow,
  type HistoryEventLike,
  searchKey,
  stateGraph,
  stateResults,
} from '@commerce/local-cloud/saga-view';
import orderSaga from '../../statemachines/order-saga.asl.json';

const saga = orderSaga as unknown as AslDefinition;

/** A small saga: two steps, each caught into a compensation that ends in its own Succeed. */
const small: AslDefinition = {
  StartAt: 'Reserve',
  States: {
    Reserve: {
      Type: 'Task',
      Next: 'Pay',
      Catch: [{ ErrorEquals: ['OutOfStock'], Next: 'Cancel' }],
    },
    Pay: {
      Type: 'Task',
      Next: 'Done',
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Release' }],
    },
    Done: { Type: 'Succeed' },
    Release: { Type: 'Task', Next: 'Cancel' },
    Cancel: { Type: 'Task', Next: 'Compensated' },
    Compensated: { Type: 'Succeed' },
  },
};

let t = 0;
const event = (type: string, details: Record<string, unknown> = {}): HistoryEventLike => {
  const key = `${type.charAt(0).toLowerCase()}${type.slice(1)}EventDetails`;
  return { type, timestamp: ++t, ...(Object.keys(details).length ? { [key]: details } : {}) };
};
const entered = (name: string) => ({
  type: 'TaskStateEntered',
  timestamp: ++t,
  stateEnteredEventDetails: { name, input: `{"at":"${name}"}` },
});
const exited = (name: string) => ({
  type: 'TaskStateExited',
  timestamp: ++t,
  stateExitedEventDetails: { name, output: `{"from":"${name}"}` },
});
const attempt = (outcome: 'Succeeded' | 'Failed', error?: string) => [
  event('TaskScheduled', { parameters: '{}' }),
  event('TaskStarted'),
  outcome === 'Succeeded'
    ? event('TaskSucceeded', { output: '{"ok":true}' })
    : event('TaskFailed', { error, cause: 'why' }),
];

describe('the saga console: the graph from the ASL', () => {
  test('every state is a node and every transition an edge, Catch edges apart', () => {
    const graph = stateGraph(small);
    expect(graph.nodes.map((n) => n.name).sort()).toEqual(Object.keys(small.States).sort());
    expect(graph.edges).toEqual(
      expect.arrayContaining([
        { from: 'Reserve', to: 'Pay', kind: 'next' },
        { from: 'Reserve', to: 'Cancel', kind: 'catch', label: 'OutOfStock' },
        { from: 'Pay', to: 'Release', kind: 'catch', label: 'States.ALL' },
      ]),
    );
    expect(graph.edges).toHaveLength(6);
  });

  test('the compensation path is what only a Catch reaches', () => {
    const graph = stateGraph(small);
    const compensation = graph.nodes.filter((n) => n.compensation).map((n) => n.name);
    expect(compensation.sort()).toEqual(['Cancel', 'Compensated', 'Release']);
  });

  test('layers by the longest path: every transition goes down; the compensation path stands right of the main one', () => {
    const graph = stateGraph(saga);
    const node = new Map(graph.nodes.map((n) => [n.name, n]));
    for (const edge of graph.edges)
      expect(node.get(edge.to)!.layer).toBeGreaterThan(node.get(edge.from)!.layer);
    const rightmostMain = Math.max(...graph.nodes.filter((n) => !n.compensation).map((n) => n.x));
    for (const n of graph.nodes.filter((n) => n.compensation)) expect(n.x).toBeGreaterThan(rightmostMain);
    // CancelOrder comes after every reason it is reached from.
    for (const reason of ['OutOfStock', 'TimedOut', 'PaymentDeclined', 'ConfirmationFailed']) {
      expect(node.get('CancelOrder')!.layer).toBeGreaterThan(node.get(reason)!.layer);
    }
    // No two boxes overlap.
    const places = graph.nodes.map((n) => `${n.x},${n.y}`);
    expect(new Set(places).size).toBe(places.length);
    expect(graph.width).toBeGreaterThan(rightmostMain);
  });

  test('a loop: its back edge is drawn but does not push the layering', () => {
    const loop: AslDefinition = {
      StartAt: 'Poll',
      States: {
        Poll: { Type: 'Task', Next: 'Ready?' },
        'Ready?': {
          Type: 'Choice',
          Choices: [{ Variable: '$.ready', BooleanEquals: true, Next: 'Done' }],
          Default: 'Wait',
        },
        Wait: { Type: 'Wait', Seconds: 1, Next: 'Poll' },
        Done: { Type: 'Succeed' },
      },
    };
    const graph = stateGraph(loop);
    const layer = Object.fromEntries(graph.nodes.map((n) => [n.name, n.layer]));
    expect(layer).toEqual({ Poll: 0, 'Ready?': 1, Wait: 2, Done: 2 });
    expect(graph.edges).toContainEqual({ from: 'Wait', to: 'Poll', kind: 'next' });
    expect(graph.edges).toContainEqual({
      from: 'Ready?',
      to: 'Done',
      kind: 'choice',
      label: '$.ready BooleanEquals true',
    });
  });
});

describe('the saga console: what each state did', () => {
  const graph = stateGraph(small);

  test('a saga that went through: its states succeeded, the others not reached; a retry is another attempt', () => {
    const states = stateResults(graph, 'SUCCEEDED', [
      event('ExecutionStarted'),
      entered('Reserve'),
      ...attempt('Succeeded'),
      exited('Reserve'),
      entered('Pay'),
      ...attempt('Failed', 'TransientError'),
      ...attempt('Succeeded'),
      exited('Pay'),
      { type: 'SucceedStateEntered', timestamp: ++t, stateEnteredEventDetails: { name: 'Done' } },
      { type: 'SucceedStateExited', timestamp: ++t, stateExitedEventDetails: { name: 'Done' } },
      event('ExecutionSucceeded'),
    ]);
    const outcome = Object.fromEntries(Object.values(states).map((s) => [s.name, s.outcome]));
    expect(outcome).toEqual({
      Reserve: 'succeeded',
      Pay: 'succeeded',
      Done: 'succeeded',
      Release: 'not-reached',
      Cancel: 'not-reached',
      Compensated: 'not-reached',
    });
    expect(states.Pay!.attempts.map((a) => [a.number, a.outcome, a.error])).toEqual([
      [1, 'failed', 'TransientError'],
      [2, 'succeeded', undefined],
    ]);
    expect(states.Pay!.error).toBeUndefined();
    expect(states.Pay!.input).toBe('{"at":"Pay"}');
    expect(states.Pay!.output).toBe('{"from":"Pay"}');
    expect(states.Pay!.exitedAt! - states.Pay!.enteredAt!).toBeGreaterThan(0);
  });

  test('a caught failure: the step failed with its error, the compensation path compensated', () => {
    const states = stateResults(graph, 'SUCCEEDED', [
      entered('Reserve'),
      ...attempt('Succeeded'),
      exited('Reserve'),
      entered('Pay'),
      ...attempt('Failed', 'PaymentDeclined'),
      exited('Pay'),
      entered('Release'),
      ...attempt('Succeeded'),
      exited('Release'),
      entered('Cancel'),
      ...attempt('Succeeded'),
      exited('Cancel'),
      { type: 'SucceedStateEntered', timestamp: ++t, stateEnteredEventDetails: { name: 'Compensated' } },
      { type: 'SucceedStateExited', timestamp: ++t, stateExitedEventDetails: { name: 'Compensated' } },
    ]);
    expect(states.Reserve!.outcome).toBe('succeeded');
    expect(states.Pay!.outcome).toBe('failed');
    expect(states.Pay!.error).toEqual({ error: 'PaymentDeclined', cause: 'why' });
    for (const name of ['Release', 'Cancel', 'Compensated'])
      expect(states[name]!.outcome).toBe('compensated');
    expect(states.Done!.outcome).toBe('not-reached');
  });

  test('running: the open state is running; once the execution has failed, it failed there', () => {
    const history = [entered('Reserve'), ...attempt('Succeeded'), exited('Reserve'), entered('Pay')];
    expect(stateResults(graph, 'RUNNING', history).Pay!.outcome).toBe('running');
    const failed = stateResults(graph, 'FAILED', [
      ...history,
      event('ExecutionFailed', { error: 'States.Runtime', cause: 'broken' }),
    ]);
    expect(failed.Pay!.outcome).toBe('failed');
    expect(failed.Pay!.error).toEqual({ error: 'States.Runtime', cause: 'broken' });
    expect(stateResults(graph, 'ABORTED', history).Pay!.outcome).toBe('failed');
  });
});

describe('the saga console: the list', () => {
  const graph = stateGraph(saga);
  const base: ExecutionLike = {
    executionArn: 'arn:aws:states:us-east-1:000000000000:execution:Saga:ord_1',
    name: 'ord_1',
    status: 'SUCCEEDED',
    startDate: 1_000,
    stopDate: 1_750,
    input: JSON.stringify({ detail: { data: { orderId: 'ord_1', customerId: 'cus_9' } } }),
  };

  test('a row: the order id from the input, the duration, and for a compensated saga its reason', () => {
    expect(executionRow({ ...base, lastState: 'Confirmed' }, graph)).toEqual({
      executionArn: base.executionArn,
      name: 'ord_1',
      status: 'SUCCEEDED',
      orderId: 'ord_1',
      startDate: 1_000,
      stopDate: 1_750,
      durationMs: 750,
      endState: 'Confirmed',
    });
    const compensated = executionRow(
      {
        ...base,
        name: 'a-uuid',
        lastState: 'Compensated',
        output: JSON.stringify({ cancellation: { reason: 'PAYMENT_DECLINED' } }),
      },
      graph,
    );
    expect(compensated).toMatchObject({
      status: 'COMPENSATED',
      orderId: 'ord_1',
      reason: 'PAYMENT_DECLINED',
    });
    const running = executionRow({ ...base, status: 'RUNNING', stopDate: undefined }, graph, 1_300);
    expect(running).toMatchObject({ status: 'RUNNING', durationMs: 300 });
    expect(executionRow({ ...base, status: 'FAILED', error: 'States.Runtime' }, graph).reason).toBe(
      'States.Runtime',
    );
  });

  test('the filter: by the console status and by text in the name, order id, customer id or reason', () => {
    const compensated = {
      ...base,
      name: 'a-uuid',
      lastState: 'Compensated',
      output: '{"cancellation":{"reason":"OUT_OF_STOCK"}}',
    };
    expect(searchKey(compensated)).toBe('a-uuid\nord_1\ncus_9\nout_of_stock');
    expect(executionFilter({ status: 'COMPENSATED' })(compensated, graph)).toBe(true);
    expect(executionFilter({ status: 'SUCCEEDED' })(compensated, graph)).toBe(false);
    expect(executionFilter({ text: 'ORD_1' })(compensated, graph)).toBe(true);
    expect(executionFilter({ text: 'CUS_9' })(compensated, graph)).toBe(true);
    expect(executionFilter({ text: 'out_of_stock' })(compensated, graph)).toBe(true);
    expect(executionFilter({ text: 'a-uu' })(compensated, graph)).toBe(true);
    expect(executionFilter({ text: 'ord_2' })(compensated, graph)).toBe(false);
    expect(executionFilter({ text: 'ord_.' })(compensated, graph)).toBe(false);
    expect(executionFilter({})(compensated, graph)).toBe(true);
    // The key comes from the caller's cache when it has one.
    expect(executionFilter({ text: 'cached' }, () => 'a cached key')(compensated, graph)).toBe(true);
  });
});
