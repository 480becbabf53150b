/**
 * The functions' Step Functions client: the three calls they make, in Step
 * Functions' JSON protocol (https://docs.aws.amazon.com/step-functions/latest/apireference/),
 * sent by `AwsJsonClient` (./aws-json.ts). It takes the SDK's inputs and
 * answers its outputs, timestamps as `Date`s, as the SDK
 * reads the protocol's epoch seconds.
 */

import type {
  DescribeExecutionInput,
  DescribeExecutionOutput,
  GetExecutionHistoryInput,
  GetExecutionHistoryOutput,
  HistoryEvent,
  StartExecutionInput,
  StartExecutionOutput,
} from '@aws-sdk/client-sfn';
import { AwsJsonClient, type AwsJsonClientOptions, type Wire } from './aws-json';

const STEP_FUNCTIONS = {
  signingName: 'states',
  endpointVariable: 'SFN',
  targetPrefix: 'AWSStepFunctions.',
  jsonVersion: '1.0',
} as const;

/** A timestamp of the protocol (epoch seconds, with a fraction) as the SDK gives it. */
const dateOf = (seconds: unknown) => (typeof seconds === 'number' ? new Date(seconds * 1000) : undefined);

export class StepFunctions {
  private readonly client: AwsJsonClient;

  constructor(options: AwsJsonClientOptions) {
    this.client = new AwsJsonClient(STEP_FUNCTIONS, options);
  }

  async startExecution(input: StartExecutionInput): Promise<StartExecutionOutput> {
    const out = await this.client.call('StartExecution', { ...input });
    return { ...out, startDate: dateOf(out.startDate) } as StartExecutionOutput;
  }

  async describeExecution(input: DescribeExecutionInput): Promise<DescribeExecutionOutput> {
    const out = await this.client.call('DescribeExecution', { ...input });
    return {
      ...out,
      startDate: dateOf(out.startDate),
      stopDate: dateOf(out.stopDate),
    } as DescribeExecutionOutput;
  }

  async getExecutionHistory(input: GetExecutionHistoryInput): Promise<GetExecutionHistoryOutput> {
    const out = await this.client.call('GetExecutionHistory', { ...input });
    const events = (out.events as Wire[] | undefined)?.map(
      (event) => ({ ...event, timestamp: dateOf(event.timestamp) }) as HistoryEvent,
    );
    return { ...out, events } as GetExecutionHistoryOutput;
  }

  /** Closes the kept-alive connections (a test's clean-up; a function never needs it). */
  destroy() {
    this.client.destroy();
  }
}
