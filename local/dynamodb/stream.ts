import { type StoredItem, unpack } from './collection';
import { DynamoDbError, validation } from './errors';
import { type Item, itemSize } from './values';

/** A stream record as `GetRecords` returns it (and Lambda delivers it). */
export interface StreamRecord {
  readonly eventID: string;
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly eventVersion: '1.1';
  readonly eventSource: 'aws:dynamodb';
  readonly awsRegion: string;
  readonly dynamodb: {
    readonly ApproximateCreationDateTime: number;
    readonly Keys: Item;
    readonly NewImage?: Item;
    readonly OldImage?: Item;
    readonly SequenceNumber: string;
    readonly SizeBytes: number;
    readonly StreamViewType: StreamViewType;
  };
}

export type StreamViewType = 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';

/** DynamoDB keeps stream records for 24 hours ("Change data capture for DynamoDB Streams"). */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
/** An iterator expires 15 minutes after it was returned (GetShardIterator, API Reference). */
const ITERATOR_LIFETIME_MS = 15 * 60 * 1000;
/** GetRecords: "The maximum number of records to return from the shard ... The upper limit is 1000." */
const MAX_RECORDS = 1000;
/**
 * Changes kept at most beyond the 24 hours: a local cloud is not a 24-hour
 * service, and a long soak at 100 writes/s would keep gigabytes. The pollers
 * read records within milliseconds; a reader further behind than this gets
 * `TrimmedDataAccessException`, as it would after 24 hours on AWS.
 */
export const MAX_KEPT_RECORDS = 200_000;
/** Changes trimmed at once at least, beyond MAX_KEPT_RECORDS or past the 24 hours. */
export const TRIM_BATCH = 10_000;

/**
 * One change as the stream keeps it: its sequence number, when it was made,
 * and the item before and after (the entries stored for them, whose text the
 * table shares). The record `GetRecords` answers with is built from it when it
 * is read: a change kept costs a few dozen bytes, not a record's.
 */
interface Change {
  readonly sequence: bigint;
  readonly at: number;
  readonly before: StoredItem | undefined;
  readonly after: StoredItem | undefined;
}

/**
 * One table's stream: a single open shard whose records carry sequence
 * numbers that grow across the whole engine (DynamoDB's only promise is
 * that they grow within a shard).
 */
export class TableStream {
  readonly shardId: string;
  private changes: Change[] = [];
  /** Sequence number of changes[0]; changes before it were trimmed. */
  private firstKept = 0n;

  constructor(
    readonly arn: string,
    readonly label: string,
    readonly viewType: StreamViewType,
    createdAt: number,
    private readonly keyOf: (item: Item) => Item,
  ) {
    this.shardId = `shardId-${String(createdAt).padStart(20, '0')}-${label.replace(/\D/g, '').slice(0, 8)}`;
  }

  append(sequence: bigint, at: number, before: StoredItem | undefined, after: StoredItem | undefined) {
    this.changes.push({ sequence, at, before, after });
    if (this.changes.length === 1) this.firstKept = sequence;
    // A trim copies what is kept, so it waits until a batch can go; DynamoDB too removes records past 24 hours
    // "at any moment", not at once.
    const horizon = Date.now() - RETENTION_MS;
    const overCount = this.changes.length - MAX_KEPT_RECORDS;
    const batchAged = (this.changes[TRIM_BATCH - 1]?.at ?? horizon) < horizon;
    if (overCount < TRIM_BATCH && !batchAged) return;
    let drop = Math.max(0, overCount);
    while (drop < this.changes.length && this.changes[drop]!.at < horizon) drop++;
    this.changes = this.changes.slice(drop);
    this.firstKept = this.changes[0]?.sequence ?? this.firstKept;
  }

  /** The record DynamoDB Streams delivers for a change (Record, DynamoDB Streams API Reference). */
  private record(change: Change): StreamRecord {
    const { before, after } = change;
    const view = this.viewType;
    const keys = this.keyOf((after ?? before)!.keys);
    const newImage =
      after && (view === 'NEW_IMAGE' || view === 'NEW_AND_OLD_IMAGES') ? unpack(after) : undefined;
    const oldImage =
      before && (view === 'OLD_IMAGE' || view === 'NEW_AND_OLD_IMAGES') ? unpack(before) : undefined;
    const sequence = sequenceNumber(change.sequence);
    return {
      // Unique per record, and the same each time the record is read (or rebuilt from the journal).
      eventID: `${this.label.replace(/\D/g, '')}${sequence}`.slice(-32).padStart(32, '0'),
      eventName: !before ? 'INSERT' : !after ? 'REMOVE' : 'MODIFY',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: this.arn.split(':')[3]!,
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(change.at / 1000),
        Keys: keys,
        ...(newImage ? { NewImage: newImage } : {}),
        ...(oldImage ? { OldImage: oldImage } : {}),
        SequenceNumber: sequence,
        SizeBytes: itemSize(keys) + itemSize(newImage) + itemSize(oldImage),
        StreamViewType: view,
      },
    };
  }

  get description() {
    return {
      ShardId: this.shardId,
      // An open shard has a starting sequence number and no ending one.
      SequenceNumberRange: {
        StartingSequenceNumber: sequenceNumber(this.changes[0]?.sequence ?? this.firstKept),
      },
    };
  }

  /** GetShardIterator: the position, encoded (an iterator is opaque to the caller). */
  iterator(type: string, sequence: string | undefined): string {
    let position: number;
    switch (type) {
      case 'TRIM_HORIZON':
        position = 0;
        break;
      case 'LATEST':
        position = this.changes.length;
        break;
      case 'AT_SEQUENCE_NUMBER':
      case 'AFTER_SEQUENCE_NUMBER': {
        if (sequence === undefined || !/^\d{21,40}$/.test(sequence)) {
          throw validation(`Invalid SequenceNumber for ShardIteratorType ${type}`);
        }
        const at = this.indexOf(BigInt(sequence));
        if (at === undefined) {
          throw new DynamoDbError(
            'TrimmedDataAccessException',
            'The operation attempted to read past the oldest stream record in a shard.',
          );
        }
        position = at + (type === 'AFTER_SEQUENCE_NUMBER' ? 1 : 0);
        break;
      }
      default:
        throw validation(
          `1 validation error detected: Value '${type}' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]`,
        );
    }
    return encodeIterator(this.arn, this.shardId, this.sequenceAt(position), Date.now());
  }

  /** GetRecords from an iterator: up to `limit` records and the iterator after them. */
  read(iterator: IteratorPosition, limit = MAX_RECORDS) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RECORDS) {
      throw validation(
        `1 validation error detected: Value '${limit}' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 1000`,
      );
    }
    if (Date.now() - iterator.issuedAt > ITERATOR_LIFETIME_MS) {
      throw new DynamoDbError(
        'ExpiredIteratorException',
        'Iterator expired. The iterator was created over 15 minutes ago.',
      );
    }
    if (iterator.sequence < this.firstKept && this.changes.length > 0) {
      throw new DynamoDbError(
        'TrimmedDataAccessException',
        'The operation attempted to read past the oldest stream record in a shard.',
      );
    }
    const from = this.positionOf(iterator.sequence);
    const changes = this.changes.slice(from, from + limit);
    const next = this.sequenceAt(from + changes.length);
    return {
      Records: changes.map((change) => this.record(change)),
      NextShardIterator: encodeIterator(this.arn, this.shardId, next, Date.now()),
    };
  }

  /** The sequence number a reader at `position` will read next (a record's, or the one after the last). */
  private sequenceAt(position: number): bigint {
    const change = this.changes[position];
    if (change) return change.sequence;
    const last = this.changes.at(-1);
    return last ? last.sequence + 1n : this.firstKept;
  }

  private indexOf(sequence: bigint): number | undefined {
    if (this.changes.length === 0) return 0;
    if (sequence < this.firstKept) return undefined;
    return this.positionOf(sequence);
  }

  /** The index of the first record whose sequence number is at least `sequence`. */
  private positionOf(sequence: bigint): number {
    let low = 0;
    let high = this.changes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.changes[mid]!.sequence < sequence) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

export interface IteratorPosition {
  readonly streamArn: string;
  readonly shardId: string;
  /** The sequence number of the next record to read (or of the next record to come). */
  readonly sequence: bigint;
  readonly issuedAt: number;
}

/** DynamoDB's sequence numbers are decimal strings of 21 digits or more. */
export const sequenceNumber = (n: bigint) => n.toString().padStart(21, '0');

/**
 * An iterator begins with its stream's ARN, as DynamoDB's do, so that a
 * GetRecords call names the stream IAM checks it against.
 */
function encodeIterator(streamArn: string, shardId: string, sequence: bigint, issuedAt: number): string {
  return `${streamArn}|${shardId}|${sequence}|${issuedAt}`;
}

export function decodeIterator(iterator: unknown): IteratorPosition {
  const parts = typeof iterator === 'string' ? iterator.split('|') : [];
  const [streamArn, shardId, sequence, issuedAt] = parts;
  if (
    parts.length !== 4 ||
    !streamArn ||
    !shardId ||
    !/^\d+$/.test(sequence ?? '') ||
    !/^\d+$/.test(issuedAt ?? '')
  ) {
    throw validation('Invalid ShardIterator');
  }
  return { streamArn, shardId, sequence: BigInt(sequence!), issuedAt: Number(issuedAt) };
}
