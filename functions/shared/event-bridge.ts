/**
 * The functions' EventBridge client: `PutEvents`, in EventBridge's JSON
 * protocol (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html),
 * sent by `AwsJsonClient` (./aws-json.ts). It takes the SDK's input (an
 * entry's `Time` a `Date`, sent as the protocol's epoch seconds) and answers
 * its output.
 */

import type { PutEventsRequest, PutEventsResponse } from '@aws-sdk/client-eventbridge';
import { AwsJsonClient, type AwsJsonClientOptions } from './aws-json';

const EVENTBRIDGE = {
  signingName: 'events',
  endpointVariable: 'EVENTBRIDGE',
  targetPrefix: 'AWSEvents.',
  jsonVersion: '1.1',
} as const;

export class EventBridge {
  private readonly client: AwsJsonClient;

  constructor(options: AwsJsonClientOptions) {
    this.client = new AwsJsonClient(EVENTBRIDGE, options);
  }

  async putEvents(input: PutEventsRequest): Promise<PutEventsResponse> {
    const out = await this.client.call('PutEvents', {
      ...input,
      Entries: input.Entries?.map((entry) => ({
        ...entry,
        Time: entry.Time && entry.Time.getTime() / 1000,
      })),
    });
    return out as PutEventsResponse;
  }

  /** Closes the kept-alive connections (a test's clean-up; a function never needs it). */
  destroy() {
    this.client.destroy();
  }
}
