import { AdmissionControl, type SagaGauge } from '../../admission';
import type { LambdaRuntime } from '../../lambda/runtime';

const ORDERS_API = 'OrdersApi';
const SAGA_STEPS = 'SagaSteps';

/** A runtime whose saga step function has `sandboxes`, a recent duration of `recentMs` and `invocations` so far. */
function runtimeOf(invocations: () => number, sandboxes: number, recentMs: number) {
  return {
    expectedWaitMs: () => 0,
    load: (functionId: string) => ({
      cap: 4,
      sandboxes,
      recentMs,
      invocations: functionId === SAGA_STEPS ? invocations() : 0,
    }),
  } as unknown as LambdaRuntime;
}

function admissionWith(
  gauge: Omit<SagaGauge, 'taskFunctionIds' | 'startingFunctionIds' | 'runningLongerThan'> & { late?: number },
  invocations: number,
  sandboxes = 1,
  recentMs = 10,
) {
  let counted = 0;
  const admission = new AdmissionControl(
    runtimeOf(() => counted, sandboxes, recentMs),
    {
      ...gauge,
      runningLongerThan: () => gauge.late ?? 0,
      taskFunctionIds: [SAGA_STEPS],
      startingFunctionIds: new Set([ORDERS_API]),
    },
    { maxSagaBacklogMs: 100 },
  );
  counted = invocations;
  return admission;
}

const placeOrder = { routeKey: 'POST /orders', method: 'POST', functionId: ORDERS_API };
const reserve = { routeKey: 'POST /products/{id}/reservations', method: 'POST', functionId: 'InventoryApi' };

describe('admission control: the saga backlog', () => {
  test('counts every running execution as a whole saga at the step function’s recent pace', () => {
    // 20 executions so far ran 40 step invocations: 2 each, 20 ms an execution on one sandbox. Every
    // running one counts whole, however far it has gone: counting only the steps each had left let 66
    // of 4,726 orders time out under a 200/s burst (docs/benchmarks.md, session 8).
    const five = admissionWith({ runningCount: 5, executionsStarted: 20 }, 40);
    expect(five.sagaBacklogMs()).toBe((5 + 1) * 20);
    expect(five.check(placeOrder)).toBe('saga');
    // Two sandboxes halve it.
    expect(admissionWith({ runningCount: 5, executionsStarted: 20 }, 40, 2).sagaBacklogMs()).toBe(60);
  });

  test('before ten executions there is no history: one step invocation per execution', () => {
    expect(admissionWith({ runningCount: 3, executionsStarted: 5 }, 5).sagaBacklogMs()).toBe((3 + 1) * 10);
  });

  test('refuses orders while a tenth of the running sagas, and at least five, have run past the bound', () => {
    // Half a step per execution, 10 ms a step, 4 sandboxes: 1.25 ms an execution, so up to 79 running
    // stay under the 100 ms bound by the estimate; only lateness refuses here.
    const running = (runningCount: number, late: number) =>
      admissionWith({ runningCount, executionsStarted: 1000, late }, 500, 4).check(placeOrder);
    expect(running(8, 0)).toBeUndefined();
    expect(running(8, 4)).toBeUndefined(); // a few slow sagas (a retried step, a fault) do not close the door
    expect(running(8, 5)).toBe('saga');
    expect(running(60, 5)).toBeUndefined(); // five late of sixty: under a tenth
    expect(running(60, 6)).toBe('saga');
  });

  test('never refuses for the backlog while no saga runs or starts, however slow the steps last were', () => {
    // A step that ran to its 10 s timeout (under a fault) leaves the recent duration high, and only the
    // steps of admitted sagas bring it down again: an estimate alone would refuse every order for good.
    const idle = admissionWith({ runningCount: 0, executionsStarted: 20 }, 40, 1, 10_000);
    expect(idle.sagaBacklogMs()).toBeGreaterThan(100);
    expect(idle.check(placeOrder)).toBeUndefined();
    // With one running, the estimate holds again.
    const one = admissionWith({ runningCount: 1, executionsStarted: 20 }, 40, 1, 10_000);
    expect(one.check(placeOrder)).toBe('saga');
  });

  test('refuses only writes that start sagas on account of the backlog', () => {
    const busy = admissionWith({ runningCount: 50, executionsStarted: 20 }, 40);
    expect(busy.check(placeOrder)).toBe('saga');
    expect(busy.check({ ...placeOrder, method: 'GET' })).toBeUndefined();
    expect(busy.check(reserve)).toBeUndefined();
  });
});
