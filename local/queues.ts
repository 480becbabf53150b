import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Assembly, arnOf, resourcesOfType } from './assembly';

export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: string;
}

/**
 * The template's SQS queues, which here are all dead-letter queues and
 * on-failure destinations: what lands in one is kept in memory and appended
 * to `<dir>/<queue>.jsonl`, so a failure is never lost silently.
 */
export class LocalQueues {
  private readonly queues = new Map<string, QueuedMessage[]>();

  constructor(
    assembly: Assembly,
    private readonly dir: string,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const [logicalId, r] of resourcesOfType(assembly.template, 'AWS::SQS::Queue')) {
      this.queues.set(arnOf(logicalId, r), []);
    }
  }

  get arns(): string[] {
    return [...this.queues.keys()];
  }

  async send(arn: string, payload: unknown) {
    const queue = this.queues.get(arn);
    if (!queue) throw new Error(`no local queue ${arn}`);
    const message = {
      messageId: randomUUID(),
      body: JSON.stringify(payload),
      sentAt: new Date().toISOString(),
    };
    queue.push(message);
    appendFileSync(join(this.dir, `${arn.split(':').at(-1)}.jsonl`), `${JSON.stringify(message)}\n`);
  }

  messages(arn: string): readonly QueuedMessage[] {
    return this.queues.get(arn) ?? [];
  }

  /** How many messages each queue holds, by queue name. */
  depths(): Record<string, number> {
    return Object.fromEntries([...this.queues].map(([arn, q]) => [arn.split(':').at(-1)!, q.length]));
  }
}
