import type { AslDefinition } from '@commerce/local-cloud';
import {
  correlationIdOf,
  type ExecutionLike,
  eventSummary,
  executionFilter,
  executionRow,
  type HistoryEventLike,
  historyRows,
  logLineSummary,
  prettyJson,
  readableDetails,
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

describe("the saga console: an execution's data, history and log lines", () => {
  const graph = stateGraph(small);
  const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:StepsFunction';
  const invokeParameters = JSON.stringify({ FunctionName: FUNCTION_ARN, Payload: { action: 'reserve' } });
  /** A history as Step Functions records it (ids from 1, epoch seconds): Reserve invoked twice, then Pay. */
  const START = 1_800_000_000;
  const history: HistoryEventLike[] = [
    {
      type: 'ExecutionStarted',
      timestamp: START,
      executionStartedEventDetails: { input: '{"orderId":"o-1"}' },
    },
    {
      type: 'TaskStateEntered',
      timestamp: START + 0.001,
      stateEnteredEventDetails: { name: 'Reserve', input: '{}' },
    },
    {
      type: 'TaskScheduled',
      timestamp: START + 0.002,
      taskScheduledEventDetails: { resourceType: 'lambda', resource: 'invoke', parameters: invokeParameters },
    },
    {
      type: 'TaskStarted',
      timestamp: START + 0.003,
      taskStartedEventDetails: { resourceType: 'lambda', resource: 'invoke' },
    },
    {
      type: 'TaskFailed',
      timestamp: START + 0.05,
      taskFailedEventDetails: {
        resourceType: 'lambda',
        resource: 'invoke',
        error: 'TransientError',
        cause: '{"errorMessage":"flaky"}',
      },
    },
    {
      type: 'TaskScheduled',
      timestamp: START + 1.05,
      taskScheduledEventDetails: { resourceType: 'lambda', resource: 'invoke', parameters: invokeParameters },
    },
    {
      type: 'TaskStarted',
      timestamp: START + 1.051,
      taskStartedEventDetails: { resourceType: 'lambda', resource: 'invoke' },
    },
    {
      type: 'TaskSucceeded',
      timestamp: START + 1.1,
      taskSucceededEventDetails: {
        resourceType: 'lambda',
        resource: 'invoke',
        output: '{"Payload":{"ok":true}}',
      },
    },
    {
      type: 'TaskStateExited',
      timestamp: START + 1.101,
      stateExitedEventDetails: { name: 'Reserve', output: '{"r":1}' },
    },
    {
      type: 'TaskStateEntered',
      timestamp: START + 1.102,
      stateEnteredEventDetails: { name: 'Pay', input: '{}' },
    },
    {
      type: 'TaskScheduled',
      timestamp: START + 1.103,
      taskScheduledEventDetails: { resourceType: 'dynamodb', resource: 'getItem', parameters: '{}' },
    },
  ].map((e, i) => ({ id: i + 1, ...e }));
  const invocations = new Map([
    [3, { functionName: 'StepsFunction', requestId: 'req-1' }],
    [6, { functionName: 'StepsFunction', requestId: 'req-2' }],
  ]);

  test("each attempt that invoked a function names it and its request id (its log lines' key)", () => {
    const states = stateResults(graph, 'RUNNING', history, invocations);
    expect(states.Reserve!.attempts.map((a) => [a.number, a.outcome, a.functionName, a.requestId])).toEqual([
      [1, 'failed', 'StepsFunction', 'req-1'],
      [2, 'succeeded', 'StepsFunction', 'req-2'],
    ]);
    // An attempt that invoked no function (a DynamoDB read, an injected fault) has none.
    expect(states.Pay!.attempts).toHaveLength(1);
    expect(states.Pay!.attempts[0]!.requestId).toBeUndefined();
    // Without the map (as before): the same attempts, no request ids.
    expect(stateResults(graph, 'RUNNING', history).Reserve!.attempts.map((a) => a.requestId)).toEqual([
      undefined,
      undefined,
    ]);
  });

  test('the history: every event in order, with its time since the start, its state and its details', () => {
    const rows = historyRows(history, START * 1000, invocations);
    expect(rows.map((r) => r.id)).toEqual(history.map((e) => e.id));
    expect(rows.map((r) => r.type)).toEqual(history.map((e) => e.type));
    expect(rows.map((r) => Math.round(r.elapsedMs))).toEqual([
      0, 1, 2, 3, 50, 1050, 1051, 1100, 1101, 1102, 1103,
    ]);
    expect(rows[0]!.timestamp).toBe(START * 1000);
    expect(rows.map((r) => r.state)).toEqual([undefined, ...Array(8).fill('Reserve'), 'Pay', 'Pay']);
    expect(rows[2]).toMatchObject({
      summary: 'lambda:invoke StepsFunction',
      functionName: 'StepsFunction',
      requestId: 'req-1',
      details: { resourceType: 'lambda', resource: 'invoke', parameters: invokeParameters },
    });
    expect(rows[5]!.requestId).toBe('req-2');
    expect(rows[4]!.summary).toBe('TransientError: {"errorMessage":"flaky"}');
    expect(rows[10]!.summary).toBe('dynamodb:getItem');
    // Only the scheduled events name the invocation.
    expect(rows.filter((r) => r.requestId).map((r) => r.id)).toEqual([3, 6]);
    // An event without details (TaskStarted of a function ARN resource, say) has none.
    expect(
      historyRows([{ id: 1, type: 'LambdaFunctionStarted', timestamp: START }], START * 1000)[0],
    ).toEqual({
      id: 1,
      type: 'LambdaFunctionStarted',
      timestamp: START * 1000,
      elapsedMs: 0,
      summary: '',
    });
  });

  test("a row's few words: the function a Task invokes, or the error and cause", () => {
    expect(
      eventSummary({
        type: 'LambdaFunctionScheduled',
        timestamp: 1,
        lambdaFunctionScheduledEventDetails: { resource: FUNCTION_ARN, input: '{}' },
      }),
    ).toBe('StepsFunction');
    expect(
      eventSummary({
        type: 'ExecutionFailed',
        timestamp: 1,
        executionFailedEventDetails: { error: 'States.Timeout' },
      }),
    ).toBe('States.Timeout');
    expect(
      eventSummary({
        type: 'ExecutionFailed',
        timestamp: 1,
        executionFailedEventDetails: { cause: 'x'.repeat(500) },
      }),
    ).toHaveLength(120);
    expect(
      eventSummary({ type: 'PassStateEntered', timestamp: 1, stateEnteredEventDetails: { name: 'P' } }),
    ).toBe('');
  });

  test('details for reading: the JSON texts parsed, the rest as it is', () => {
    expect(
      readableDetails({
        input: '{"a":1}',
        output: 'not json',
        cause: '{"errorMessage":"m"}',
        name: '{"a":1}',
        timeoutInSeconds: 5,
      }),
    ).toEqual({
      input: { a: 1 },
      output: 'not json',
      cause: { errorMessage: 'm' },
      name: '{"a":1}',
      timeoutInSeconds: 5,
    });
    expect(prettyJson('{"a":{"b":1}}')).toBe('{\n  "a": {\n    "b": 1\n  }\n}');
    expect(prettyJson('plain')).toBe('plain');
    expect(prettyJson(undefined)).toBe('');
  });

  test("the correlation id an execution's input carries (ids only: nothing is added to the input)", () => {
    expect(
      correlationIdOf(JSON.stringify({ detail: { correlationId: 'c-1', data: { orderId: 'o' } } })),
    ).toBe('c-1');
    expect(correlationIdOf('{"correlationId":"c-2"}')).toBe('c-2');
    expect(correlationIdOf('{"orderId":"o"}')).toBeUndefined();
    expect(correlationIdOf('not json')).toBeUndefined();
  });

  test("a log line in one line: Powertools' message, an EMF document's metrics, else the text", () => {
    expect(logLineSummary({ message: 'saga step failed', text: '{}' })).toBe('saga step failed');
    const emf = {
      _aws: {
        Timestamp: 1,
        CloudWatchMetrics: [
          {
            Namespace: 'N',
            Dimensions: [['service']],
            Metrics: [{ Name: 'SagaConfirmed' }, { Name: 'SagaDurationMs' }],
          },
        ],
      },
      service: 'saga',
      SagaConfirmed: 1,
      SagaDurationMs: 388,
    };
    expect(logLineSummary({ fields: emf, text: JSON.stringify(emf) })).toBe(
      'metrics SagaConfirmed=1, SagaDurationMs=388',
    );
    expect(logLineSummary({ text: 'Error: boom' })).toBe('Error: boom');
  });
});
