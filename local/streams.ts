// Longer than 400 lines because one shard's poller is one piece of state: its position, the batch it
// gathers and its delivery (retry, bisect, give up to the on-failure destination) read and move it together.
import type { KeptDocument } from './data-dir';
import type { PoisonRecords } from './delivery-faults';
import type { DuplicateDelivery } from './duplicates';
import type { DynamoJsonClient } from './dynamo-client';
import type { LambdaRuntime } from './lambda/runtime';
import type { LocalQueues } from './queues';
import { type MappingSpec, passesFilters } from './stream-mappings';

interface StreamRecord {
  eventID: string;
  eventName: string;
  dynamodb: { SequenceNumber: string; ApproximateCreationDateTime?: number; [key: string]: unknown };
  [key: string]: unknown;
}

// Every write the DynamoDB engine commits pokes its table's pollers at once, so an idle poll is only
// a safety net: it finds nothing unless a poke went astray. It backs off, as it rarely finds anything.
const IDLE_POLL_MIN_MS = 500;
const IDLE_POLL_MAX_MS = 4_000;
const RETRY_DELAY_MS = 50;
/**
 * After a poke, how long the poller collects further writes before it polls:
 * one GetRecords then takes all of them, in fewer, fuller batches. Lambda itself
 * polls a stream's shard about four times a second. Chosen on DynamoDB
 * Local, the server the local cloud used before its own engine: polling at
 * every write cost it about 2 ms of CPU per GetRecords, and an order's
 * writes woke the two pollers nine times (measured: 9.4 GetRecords per order).
 */
const POKE_COLLECT_MS = 20;

/** A mapping's position as kept in the data directory: the last sequence number handled, per shard. */
export interface StreamPosition {
  /** The stream it is a position in (a table created anew has a new stream: the position is not its). */
  readonly streamArn: string;
  readonly delivered: Record<string, string>;
}

/**
 * One event source mapping: reads its table's stream from the start, shard by
 * shard, and invokes the function with batches as Lambda does — partial batch
 * failures, bisecting a failing batch, bounded retries, and what still fails
 * sent to the on-failure destination. It polls again once a write to its
 * table is seen and the mapping's batching window has passed (or a batch's
 * worth of writes was seen), and otherwise every 0.5 s, backing off to every 4 s
 * while the stream stays idle.
 */
export class StreamPoller {
  private stopped = false;
  private wake?: () => void;
  /** A write was seen since the last poll began, or a poll must be repeated: poll again (after the gathering). */
  private poked = false;
  /** Writes seen while gathering a batch; a batch's worth ends the gathering early, as a full batch does on Lambda. */
  private writesGathered = 0;
  private gathered?: () => void;
  /** Told of the next write while a partial batch gathers more records (see `moreWritten`). */
  private written?: () => void;
  /** Reading the stream or delivering what it read. */
  private polling = false;
  /** Each shard's next iterator; null once the shard is closed and read to its end. */
  private readonly iterators = new Map<string, string | null>();
  private shardsChanged = true;
  /** The last sequence number delivered per shard, to resume after an iterator goes stale. */
  private readonly delivered = new Map<string, string>();
  private lastError = '';
  /** Why the batch being delivered last failed (an error, or the records the function reported failed). */
  private lastDeliveryError = '';
  /** Polls in a row that found nothing, for the idle backoff. */
  private idlePolls = 0;
  private loop?: Promise<void>;
  /**
   * Records delivered, batches, records that ended in the on-failure destination, and records
   * the mapping's filters dropped (read and passed over, never delivered).
   */
  readonly stats = {
    polls: 0,
    records: 0,
    batches: 0,
    failedToDestination: 0,
    filtered: 0,
    duplicatedBatches: 0,
    /** Batching windows waited (a poll after writes gathers them first; a backlog is read at once). */
    gathers: 0,
  };

  constructor(
    readonly spec: MappingSpec,
    private readonly dynamo: DynamoJsonClient,
    private readonly runtime: LambdaRuntime,
    private readonly queues: LocalQueues,
    private readonly log: (message: string) => void,
    /**
     * Where the position is kept (`--data-dir`): read at construction, so the
     * mapping resumes just after the last record it handled, and written after
     * each batch is handled (delivered, filtered out, or given up to the
     * destination). A crash between the function's answer and the write
     * delivers that batch again: at least once, as on AWS.
     */
    private readonly position?: KeptDocument<StreamPosition>,
    /** Duplicate delivery injected (read at each batch; absent or 0: none). */
    private readonly duplicates?: Readonly<DuplicateDelivery>,
    /** Poison records injected (local/delivery-faults.ts; absent: none). */
    private readonly poison?: PoisonRecords,
  ) {
    const kept = position?.read();
    if (kept?.streamArn === spec.streamArn) {
      for (const [shardId, sequenceNumber] of Object.entries(kept.delivered)) {
        this.delivered.set(shardId, sequenceNumber);
      }
    }
  }

  start() {
    this.loop = this.run();
  }

  /** A write to this table happened: poll soon. */
  poke() {
    this.poked = true;
    this.wake?.();
    if (++this.writesGathered >= this.spec.batchSize) this.gathered?.();
    this.written?.();
  }

  /**
   * Waits while writes gather: the mapping's batching window (Lambda's
   * MaximumBatchingWindowInSeconds), at least POKE_COLLECT_MS, and no longer
   * once a batch's worth of writes was seen (a transaction counts as one
   * write here, so a batch of them may wait its whole window).
   */
  private gather(): Promise<void> {
    this.writesGathered = 0;
    this.stats.gathers++;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(POKE_COLLECT_MS, this.spec.batchingWindowMs));
      this.gathered = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.gathered = undefined;
    });
  }

  /**
   * Whether records may be on their way to the function: a write was seen and
   * not yet read, a batch is being gathered, or the stream is being read or
   * its records delivered, or a late copy of a batch is still to come. A
   * quiescent cloud has no mapping pending.
   */
  get pending(): boolean {
    return this.poked || this.gathered !== undefined || this.polling || this.lateCopies.size > 0;
  }

  async stop() {
    this.stopped = true;
    for (const late of this.lateCopies) clearTimeout(late);
    this.lateCopies.clear();
    this.wake?.();
    this.gathered?.();
    this.written?.();
    await this.loop;
  }

  private async run() {
    // The last page read was full: records are waiting in the stream, read them at once (a window only
    // gathers records that are yet to come, as on Lambda, where a consumer behind reads batch after batch).
    let full = false;
    while (!this.stopped) {
      this.polling = true;
      // The window of the batches this poll reads: from the gathering's start, or from now for a backlog.
      const windowEnds = performance.now() + this.spec.batchingWindowMs;
      if (this.poked && !full && !this.stopped) await this.gather();
      this.poked = false;
      let delivered = 0;
      full = false;
      try {
        await this.refreshShards();
        for (const [shardId, iterator] of this.iterators) {
          if (iterator === null) continue;
          const records = await this.pollShard(shardId, iterator, windowEnds);
          delivered += records;
          full ||= records >= this.spec.batchSize;
        }
      } catch (error) {
        // Report each distinct failure once, not on every poll.
        const message = (error as Error).message;
        if (!this.stopped && message !== this.lastError)
          this.log(`stream ${this.spec.logicalId}: ${message}`);
        this.lastError = message;
      }
      this.polling = false;
      if (delivered > 0) this.idlePolls = 0;
      // A full page may have more behind it; a write seen meanwhile has too. Otherwise wait for the next.
      if (full || this.poked) continue;
      if (!this.stopped) {
        const idleMs = Math.min(IDLE_POLL_MIN_MS * 2 ** this.idlePolls++, IDLE_POLL_MAX_MS);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, idleMs);
          this.wake = () => {
            clearTimeout(timer);
            this.idlePolls = 0;
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  private async refreshShards() {
    // Until a shard is known (a stream may list none before its first write), look again on every poll.
    if (!this.shardsChanged && [...this.iterators.values()].some((i) => i !== null)) return;
    this.shardsChanged = false;
    const description = await this.dynamo.call<{
      StreamDescription: {
        Shards: { ShardId: string; SequenceNumberRange?: { EndingSequenceNumber?: string } }[];
      };
    }>('DynamoDBStreams_20120810.DescribeStream', { StreamArn: this.spec.streamArn });
    for (const shard of description.StreamDescription.Shards) {
      if (this.iterators.has(shard.ShardId)) continue;
      this.iterators.set(shard.ShardId, await this.iteratorFor(shard.ShardId));
    }
  }

  /** From the start of the shard, or just after the last record delivered from it. */
  private async iteratorFor(shardId: string): Promise<string> {
    const after = this.delivered.get(shardId);
    const iterator = async (position: Record<string, string>) =>
      (
        await this.dynamo.call<{ ShardIterator: string }>('DynamoDBStreams_20120810.GetShardIterator', {
          StreamArn: this.spec.streamArn,
          ShardId: shardId,
          ...position,
        })
      ).ShardIterator;
    if (!after) return iterator({ ShardIteratorType: 'TRIM_HORIZON' });
    try {
      return await iterator({ ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after });
    } catch (error) {
      // A position kept (--data-dir) beyond the stream's 24 hours: what followed it is gone, as on AWS.
      if ((error as { code?: string }).code !== 'TrimmedDataAccessException') throw error;
      this.log(
        `stream ${this.spec.logicalId}: records after ${after} were trimmed; reading ${shardId} from its oldest`,
      );
      return iterator({ ShardIteratorType: 'TRIM_HORIZON' });
    }
  }

  /**
   * Reads a batch from the shard and delivers it. As Lambda gathers a batch
   * (until it is full, its batching window ends, or the payload limit), a
   * partial page read before `windowEnds` waits for further writes and reads
   * on: a consumer reading a backlog batch after batch otherwise took what
   * had come in while the last batch ran, a batch part full, and a flash
   * sale's projector wrote the product's view item once per ~92 records
   * where Lambda would once per 100.
   */
  private async pollShard(shardId: string, iterator: string, windowEnds: number): Promise<number> {
    const first = await this.readPage(shardId, iterator, this.spec.batchSize);
    if (!first) return 0;
    const records = [...first.Records];
    let next = first.NextShardIterator;
    let stale = false;
    while (
      records.length > 0 &&
      records.length < this.spec.batchSize &&
      next &&
      !this.stopped &&
      (await this.moreWritten(windowEnds))
    ) {
      const more = await this.readPage(shardId, next, this.spec.batchSize - records.length, false);
      // Its iterator gone stale (never seen: it was just issued): deliver what was read, resume after it.
      if (!more) {
        stale = true;
        break;
      }
      records.push(...more.Records);
      next = more.NextShardIterator;
    }
    if (records.length > 0 && this.spec.enabled) {
      const events = records.map((r) => this.asEvent(r));
      // As Lambda does: records no filter matches are dropped, and the mapping moves past them.
      const passing = events.filter((e) => passesFilters(this.spec.filters, e));
      this.stats.filtered += events.length - passing.length;
      // Stopped before the batch was handled: its position stays where it was, for the next start.
      if (passing.length > 0) {
        this.shardInDelivery = shardId;
        if (!(await this.deliver(passing))) return 0;
        // At-least-once: the batch again, as Lambda delivers it when it retries a batch whose answer it lost.
        const rate = this.duplicates?.streamRecords ?? 0;
        if (rate > 0 && Math.random() < rate && !this.stopped) {
          this.stats.duplicatedBatches++;
          const lateMs = this.duplicates?.lateMs ?? 0;
          if (lateMs > 0) {
            // Late: after the batches that follow it, out of order, while the shard moves on.
            // Pending (see `pending`) until the copy's delivery has settled.
            const late = setTimeout(() => {
              if (this.stopped) return;
              this.deliver(passing)
                .catch((e: Error) => this.log(`late copy: ${e.message}`))
                .finally(() => this.lateCopies.delete(late));
            }, lateMs);
            this.lateCopies.add(late);
          } else await this.deliver(passing);
        }
      }
      this.delivered.set(shardId, records.at(-1)!.dynamodb.SequenceNumber);
      this.position?.write({ streamArn: this.spec.streamArn, delivered: Object.fromEntries(this.delivered) });
    }
    if (stale) {
      this.iterators.set(shardId, await this.iteratorFor(shardId));
    } else {
      // A closed shard has no next iterator; its children are found on the next refresh.
      this.iterators.set(shardId, next ?? null);
      if (!next) this.shardsChanged = true;
    }
    return records.length;
  }

  /**
   * One GetRecords of at most `limit` records; undefined when the iterator
   * had expired (15 minutes after it was issued) or its records were
   * trimmed. Then, when `renew`, a fresh one is taken and the poll repeated.
   */
  private async readPage(
    shardId: string,
    iterator: string,
    limit: number,
    renew = true,
  ): Promise<{ Records: StreamRecord[]; NextShardIterator?: string } | undefined> {
    this.stats.polls++;
    try {
      return await this.dynamo.call('DynamoDBStreams_20120810.GetRecords', {
        ShardIterator: iterator,
        Limit: limit,
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'TrimmedDataAccessException' && code !== 'ExpiredIteratorException') throw error;
      if (renew) {
        this.iterators.set(shardId, await this.iteratorFor(shardId));
        this.poked = true;
      }
      return undefined;
    }
  }

  /**
   * Waits for a write before `windowEnds`, then POKE_COLLECT_MS (within the
   * window) for the writes that follow it, so that one read takes them all:
   * true when one came, false when the window ended first.
   */
  private async moreWritten(windowEnds: number): Promise<boolean> {
    const wait = (ms: number, untilWrite: boolean) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Math.max(0, ms));
        if (untilWrite)
          this.written = () => {
            clearTimeout(timer);
            resolve(true);
          };
      }).finally(() => {
        this.written = undefined;
      });
    if (!(await wait(windowEnds - performance.now(), true)) || this.stopped) return false;
    await wait(Math.min(POKE_COLLECT_MS, windowEnds - performance.now()), false);
    return true;
  }

  /** Late copies of batches not yet delivered again (cleared when the poller stops). */
  private readonly lateCopies = new Set<NodeJS.Timeout>();

  /** The shard whose batch is being delivered (named in an on-failure record, for a redrive). */
  private shardInDelivery?: string;

  /**
   * Delivers again, once, the records an on-failure record names (from
   * `start` to `end` of `shardId`, still in the stream), as a redrive does:
   * true when the function handled them all. Records no filter matches are
   * left out, as in a delivery.
   */
  async redrive(shardId: string, start: string, end: string): Promise<boolean> {
    let iterator: string | undefined = (
      await this.dynamo.call<{ ShardIterator: string }>('DynamoDBStreams_20120810.GetShardIterator', {
        StreamArn: this.spec.streamArn,
        ShardId: shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        SequenceNumber: start,
      })
    ).ShardIterator;
    const records: StreamRecord[] = [];
    const past = (seq: string) => BigInt(seq) > BigInt(end);
    while (iterator) {
      const page: { Records: StreamRecord[]; NextShardIterator?: string } = await this.dynamo.call(
        'DynamoDBStreams_20120810.GetRecords',
        { ShardIterator: iterator, Limit: 1000 },
      );
      for (const record of page.Records) if (!past(record.dynamodb.SequenceNumber)) records.push(record);
      if (page.Records.length === 0 || past(page.Records.at(-1)!.dynamodb.SequenceNumber)) break;
      iterator = page.NextShardIterator;
    }
    const passing = records.map((r) => this.asEvent(r)).filter((e) => passesFilters(this.spec.filters, e));
    if (passing.length === 0) return true;
    // Still poison while the fault is in force: the function fails on it again.
    if (
      this.poison?.poisoned(
        this.spec.streamArn,
        passing.map((r) => r.dynamodb.SequenceNumber),
      )
    )
      return false;
    const result = (await this.runtime.invoke(this.spec.functionId, { Records: passing })) as {
      batchItemFailures?: unknown[];
    } | null;
    return !this.spec.reportBatchItemFailures || (result?.batchItemFailures ?? []).length === 0;
  }

  private asEvent(record: StreamRecord) {
    return { ...record, eventSourceARN: this.spec.streamArn };
  }

  /**
   * Delivers a batch until it is done: success, partial success, or given up
   * to the destination. False if the poller stopped before it was done.
   */
  private async deliver(records: StreamRecord[]): Promise<boolean> {
    let pending = records;
    for (let attempt = 0; pending.length > 0 && !this.stopped; attempt++) {
      let failedFrom: number;
      try {
        const poison = this.poison?.poisonIn(
          this.spec.functionId,
          this.spec.streamArn,
          pending.map((r) => r.dynamodb.SequenceNumber),
        );
        // A poison record: the consumer fails on it every time it is delivered (a fault injected).
        if (poison)
          throw new Error(`PoisonRecord: ${this.spec.functionId} fails on record ${poison} every time`);
        const result = (await this.runtime.invoke(this.spec.functionId, { Records: pending })) as {
          batchItemFailures?: { itemIdentifier: string }[];
        } | null;
        this.stats.batches++;
        const failures = this.spec.reportBatchItemFailures ? (result?.batchItemFailures ?? []) : [];
        if (failures.length === 0) {
          this.stats.records += pending.length;
          return true;
        }
        this.lastDeliveryError = `the function reported ${failures.length} of ${pending.length} records failed`;
        // Lambda resumes from the lowest failed sequence number; earlier records are done.
        const failed = new Set(failures.map((f) => f.itemIdentifier));
        failedFrom = pending.findIndex((r) => failed.has(r.dynamodb.SequenceNumber));
        if (failedFrom < 0) failedFrom = 0;
        this.stats.records += failedFrom;
      } catch (error) {
        this.lastDeliveryError = (error as Error).message;
        this.log(
          `${this.spec.functionId} failed on a batch of ${pending.length}: ${(error as Error).message}`,
        );
        failedFrom = 0;
      }
      pending = pending.slice(failedFrom);
      if (attempt >= this.spec.maximumRetryAttempts) {
        await this.giveUp(pending);
        return true;
      }
      if (this.spec.bisectOnError && pending.length > 1) {
        const half = Math.ceil(pending.length / 2);
        return (await this.deliver(pending.slice(0, half))) && (await this.deliver(pending.slice(half)));
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * (attempt + 1)));
    }
    return pending.length === 0;
  }

  private async giveUp(records: StreamRecord[]) {
    this.stats.failedToDestination += records.length;
    const first = records[0]!.dynamodb.SequenceNumber;
    const last = records.at(-1)!.dynamodb.SequenceNumber;
    this.log(`${this.spec.functionId}: ${records.length} records given up after retries`);
    if (!this.spec.onFailureArn) return;
    // What Lambda sends to an on-failure destination: where the batch was, not the records.
    await this.queues.send(this.spec.onFailureArn, {
      requestContext: { functionArn: this.spec.functionId, condition: 'RetryAttemptsExhausted' },
      // Lambda's record says only `functionError: Unhandled`; the local one adds the last failure seen, so
      // that a dead letter can be explained (`npm run chaos` matches it to the fault it injected).
      responseContext: { functionError: 'Unhandled', localLastError: this.lastDeliveryError },
      DDBStreamBatchInfo: {
        shardId: this.shardInDelivery ?? 'local',
        startSequenceNumber: first,
        endSequenceNumber: last,
        batchSize: records.length,
        streamArn: this.spec.streamArn,
      },
    });
  }
}
