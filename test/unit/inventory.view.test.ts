import { parseShardEntry, shardEntry, shardsOfView, versionKey } from '../../functions/inventory/view';

const stock = { available: 15_625, reserved: 3, sold: 12, received: 15_640 };

describe("inventory: the product view's shard entries", () => {
  test('version keys sort as the versions do, across digit counts', () => {
    const versions = [0, 1, 9, 10, 11, 99, 100, 1_000, 65_536, 999_999_999];
    const keys = versions.map(versionKey);
    expect([...keys].sort()).toEqual(keys);
    // Entries compare as their versions: the projector's guard is a string comparison.
    const entries = versions.map((v) => shardEntry(v, stock));
    expect([...entries].sort()).toEqual(entries);
  });

  test('a version past nine digits is refused, not written out of order', () => {
    expect(() => versionKey(1_000_000_000)).toThrow(RangeError);
    expect(() => versionKey(-1)).toThrow(RangeError);
    expect(() => versionKey(1.5)).toThrow(RangeError);
  });

  test('an entry reads back as it was written, and a map entry of earlier versions reads too', () => {
    expect(shardEntry(42, stock)).toBe('242:15625:3:12:15640');
    expect(parseShardEntry(shardEntry(42, stock))).toEqual({ version: 42, stock });
    expect(parseShardEntry({ v: 42, a: 15_625, r: 3, s: 12, n: 15_640 })).toEqual({ version: 42, stock });
    for (const broken of ['', '242', '242:1:2:3', '242:1:2:x:4', 7, null, { a: 1 }])
      expect(parseShardEntry(broken)).toBeUndefined();
  });

  test("the view's shards are its s<n> attributes, and nothing else", () => {
    const view = {
      id: 'prd_1',
      productVersion: 2,
      s0: shardEntry(4, stock),
      s1: { v: 3, a: 1, r: 0, s: 0, n: 1 },
      sku: 'not-a-shard',
    };
    expect(shardsOfView(view as never)).toEqual([
      { shard: 0, version: 4, stock },
      { shard: 1, version: 3, stock: { available: 1, reserved: 0, sold: 0, received: 1 } },
    ]);
  });
});
