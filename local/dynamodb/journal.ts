import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { TableDefinition } from './tables';
import type { Item } from './values';

/** One change the journal keeps: a table created or dropped, or the items one write left (null: deleted). */
export type JournalEntry =
  | { readonly create: TableDefinition }
  | { readonly drop: string }
  | {
      /** [table, key, the item after the write or null] for each item the write changed. */
      readonly w: readonly (readonly [string, Item, Item | null])[];
      /** When it was written (epoch ms): the stream records' creation time. */
      readonly at: number;
      /** The first stream sequence number the write used, so that a replay numbers its records alike. */
      readonly seq: string;
    };

/**
 * The engine's data on disk (`--data-dir`): one JSON line per write,
 * appended with a plain `write(2)` before the write is acknowledged. The
 * kernel keeps what was written when the process dies, however it dies
 * (`kill -9` included), which is the promise of `--data-dir`; a power cut
 * is not covered (no fsync per write: it would cost a disk flush per call).
 * A start replays the lines in order, rebuilding tables, items and stream
 * records with their sequence numbers; a torn last line (the process died
 * inside a write, before answering it) is dropped.
 */
export class Journal {
  private readonly path: string;
  private fd: number;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, 'journal.jsonl');
    this.fd = openSync(this.path, 'a+');
  }

  /** The entries written so far, in order (the torn tail of a crash cut off). */
  *entries(): Generator<JournalEntry> {
    if (!existsSync(this.path)) return;
    const text = readFileSync(this.path, 'utf8');
    let start = 0;
    while (start < text.length) {
      const end = text.indexOf('\n', start);
      if (end < 0) {
        // Written in part when the process died: never acknowledged, so never applied.
        ftruncateSync(this.fd, Buffer.byteLength(text.slice(0, start)));
        return;
      }
      yield JSON.parse(text.slice(start, end)) as JournalEntry;
      start = end + 1;
    }
  }

  append(entry: JournalEntry) {
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  close() {
    closeSync(this.fd);
  }
}
