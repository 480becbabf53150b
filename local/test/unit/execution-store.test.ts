import { type Execution, ExecutionStore, historyOf, KEEP_HISTORIES } from '../../stepfunctions/executions';

/** A finished execution with a history of `events` events, one Task attempt among them. */
function finished(n: number, events = 12): Execution {
  const input = JSON.stringify({ orderId: `ord_${n}`, items: [{ productId: 'prd_1', quantity: 2 }] });
  return {
    executionArn: `arn:aws:states:us-east-1:000000000000:execution:Saga:${n}`,
    name: String(n),
    input,
    status: 'SUCCEEDED',
    events: Array.from({ length: events }, (_, i) => ({
      id: i + 1,
      previousEventId: i,
      timestamp: 1_795_000_000 + i,
      type: i === 0 ? 'ExecutionStarted' : 'TaskSucceeded',
      details: { input, output: `{"step":${i}}` },
    })),
    invocations: new Map([[3, { functionName: 'SagaSteps', requestId: `req-${n}` }]]),
    closed: true,
  } as unknown as Execution;
}

describe('ExecutionStore', () => {
  test('a finished execution keeps its history packed, and gives it back as it was', () => {
    const store = new ExecutionStore();
    const execution = finished(1);
    const before = JSON.parse(JSON.stringify(execution.events));
    store.add(execution);
    store.keepFinished(execution);

    expect(execution.events).toHaveLength(0);
    // A string in the heap, not a view of zlib's 16 KB output chunk.
    expect(typeof execution.packedHistory).toBe('string');
    expect(execution.packedHistory!.length).toBeLessThan(JSON.stringify(before).length / 4);
    const history = historyOf(store.get(execution.executionArn)!);
    expect(history.events).toEqual(before);
    expect([...history.invocations]).toEqual([[3, { functionName: 'SagaSteps', requestId: 'req-1' }]]);
  });

  test('a running execution is its own history', () => {
    const running = { ...finished(2), status: 'RUNNING', closed: false } as Execution;
    expect(historyOf(running).events).toBe(running.events);
  });

  test(`only the last ${KEEP_HISTORIES} finished executions keep a history; the others stay listed`, () => {
    const store = new ExecutionStore();
    const all = Array.from({ length: KEEP_HISTORIES + 2 }, (_, n) => finished(n, 3));
    for (const execution of all) {
      store.add(execution);
      store.keepFinished(execution);
    }
    for (const dropped of all.slice(0, 2)) {
      expect(dropped.historyDropped).toBe(true);
      expect(dropped.packedHistory).toBeUndefined();
      expect(historyOf(dropped).events).toEqual([]);
    }
    expect(historyOf(all[2]!).events).toHaveLength(3);
    expect([...store.all()]).toHaveLength(all.length);
  });
});
