import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

  /**
   * `resume` (`--data-dir`): each queue starts with the messages its file
   * holds from earlier starts, so a dead letter outlives a crash as it would
   * stay in SQS; otherwise the queues start empty (and the files only grow).
   */
  constructor(
    assembly: Assembly,
    private readonly dir: string,
    resume = false,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const [logicalId, r] of resourcesOfType(assembly.template, 'AWS::SQS::Queue')) {
      const arn = arnOf(logicalId, r);
      this.queues.set(arn, resume ? this.kept(arn) : []);
    }
  }

  /**
   * The messages of a queue's file. A line that is not JSON was cut short
   * (the process died in the middle of its append): that message was never
   * sent, since its send had not returned, and is left out. The cut line is
   * ended here, so that the next message starts a line of its own.
   */
  private kept(arn: string): QueuedMessage[] {
    const file = this.fileOf(arn);
    if (!existsSync(file)) return [];
    const text = readFileSync(file, 'utf8');
    if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n');
    const messages: QueuedMessage[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        messages.push(JSON.parse(line) as QueuedMessage);
      } catch {
        // a torn append: never sent
      }
    }
    return messages;
  }

  private fileOf(arn: string): string {
    return join(this.dir, `${arn.split(':').at(-1)}.jsonl`);
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
    appendFileSync(this.fileOf(arn), `${JSON.stringify(message)}\n`);
  }

  messages(arn: string): readonly QueuedMessage[] {
    return this.queues.get(arn) ?? [];
  }

  /** Deletes a message (a redrive delivered it), from the queue and its file; false if it is not there. */
  remove(arn: string, messageId: string): boolean {
    const queue = this.queues.get(arn);
    const index = queue?.findIndex((m) => m.messageId === messageId) ?? -1;
    if (!queue || index < 0) return false;
    queue.splice(index, 1);
    writeFileSync(this.fileOf(arn), queue.map((m) => `${JSON.stringify(m)}\n`).join(''));
    return true;
  }

  /** How many messages each queue holds, by queue name. */
  depths(): Record<string, number> {
    return Object.fromEntries([...this.queues].map(([arn, q]) => [arn.split(':').at(-1)!, q.length]));
  }
}
