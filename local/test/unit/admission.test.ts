import { AdmissionControl, type SagaGauge } from '../../admission';
import type { LambdaRuntime } from '../../lambda/runtime';

const ORDERS_API = 'OrdersApi';
const SAGA_STEPS = 'SagaSteps';

/** A runtime whose saga step function has one sandbox, a recent duration of 10 ms and `invocations` so far. */
function runtimeOf(invocations: () => number) {
  return {
    expectedWaitMs: () => 0,
    load: (functionId: string) => ({
      cap: 4,
      sandboxes: 1,
      recentMs: 10,
      invocations: functionId === SAGA_STEPS ? invocations() : 0,
    }),
  } as unknown as LambdaRuntime;
}

function admissionWith(
  gauge: Omit<SagaGauge, 'taskFunctionIds' | 'startingFunctionIds'>,
  invocations: number,
) {
  let counted = 0;
  const admission = new AdmissionControl(
    runtimeOf(() => counted),
    { ...gauge, taskFunctionIds: [SAGA_STEPS], startingFunctionIds: new Set([ORDERS_API]) },
    { maxSagaBacklogMs: 100 },
  );
  counted = invocations;
  return admission;
}

const placeOrder = { routeKey: 'POST /orders', method: 'POST', functionId: ORDERS_API };

describe('admission control: the saga backlog', () => {
  test('counts what the running executions have left, not each as a whole saga', () => {
    // 20 executions so far ran 40 step invocations: 2 each, 20 ms an execution on one sandbox.
    const fresh = admissionWith({ runningCount: 5, runningTasksStarted: 0, executionsStarted: 20 }, 40);
    expect(fresh.sagaBacklogMs()).toBe((5 + 1) * 20);
    expect(fresh.check(placeOrder)).toBe('saga');

    // The same five executions at their last step (two of two started) leave one step between them.
    const nearlyDone = admissionWith({ runningCount: 5, runningTasksStarted: 8, executionsStarted: 20 }, 40);
    expect(nearlyDone.sagaBacklogMs()).toBeCloseTo((1 + 1) * 20);
    expect(nearlyDone.check(placeOrder)).toBeUndefined();
  });

  test('before ten executions there is no history: every running one counts whole', () => {
    const early = admissionWith({ runningCount: 3, runningTasksStarted: 3, executionsStarted: 5 }, 5);
    expect(early.sagaBacklogMs()).toBe((3 + 1) * 10);
  });

  test('never counts less than nothing for executions that ran more steps than the average', () => {
    const retried = admissionWith({ runningCount: 2, runningTasksStarted: 9, executionsStarted: 20 }, 40);
    expect(retried.sagaBacklogMs()).toBe(1 * 20);
  });
});
