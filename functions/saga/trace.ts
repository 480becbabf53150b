import type { HistoryEvent } from '@aws-sdk/client-sfn';

export type SagaStatus = 'RUNNING' | 'SUCCEEDED' | 'COMPENSATED' | 'FAILED';

export interface SagaStep {
  name: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  startedAt: string;
  endedAt?: string;
  attempts: number;
  error?: { error: string; cause?: string };
}

const iso = (t: Date | undefined) => (t ? new Date(t).toISOString() : new Date(0).toISOString());

/**
 * Reads an execution's history into the saga's trace: one entry per task
 * state entered, with its attempts (each retry is another TaskScheduled),
 * its last error and when it ended, from the history as Step Functions'
 * GetExecutionHistory gives it.
 */
export function sagaTrace(executionStatus: string | undefined, history: readonly HistoryEvent[]) {
  const steps: SagaStep[] = [];
  let current: SagaStep | undefined;
  for (const event of history) {
    switch (event.type) {
      case 'TaskStateEntered':
        current = {
          name: event.stateEnteredEventDetails?.name ?? '?',
          status: 'RUNNING',
          startedAt: iso(event.timestamp),
          attempts: 0,
        };
        steps.push(current);
        break;
      case 'TaskScheduled':
        if (current) current.attempts++;
        break;
      case 'TaskSucceeded':
        if (current) {
          current.status = 'SUCCEEDED';
          delete current.error;
        }
        break;
      case 'TaskFailed':
      case 'TaskTimedOut': {
        const details = event.taskFailedEventDetails ?? event.taskTimedOutEventDetails;
        if (current) {
          current.status = 'FAILED';
          current.error = {
            error: details?.error ?? 'States.TaskFailed',
            ...(details?.cause ? { cause: details.cause } : {}),
          };
        }
        break;
      }
      case 'TaskStateExited':
        if (current) current.endedAt = iso(event.timestamp);
        current = undefined;
        break;
    }
  }
  // A task that failed and then succeeded on a retry ends SUCCEEDED; a task still going stays RUNNING.
  for (const step of steps) if (!step.endedAt && step.status === 'FAILED') step.status = 'RUNNING';
  // Reaching CancelOrder means the saga was compensated.
  const compensated = steps.some((s) => s.name === 'CancelOrder' && s.status === 'SUCCEEDED');
  const status: SagaStatus =
    executionStatus === 'RUNNING'
      ? 'RUNNING'
      : executionStatus === 'SUCCEEDED'
        ? compensated
          ? 'COMPENSATED'
          : 'SUCCEEDED'
        : 'FAILED';
  return { status, steps };
}
