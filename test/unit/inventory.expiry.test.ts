import { sweepExpired } from '../../functions/inventory/expiry';

/** An expiry index of `due` ids per partition, paged `pageSize` at a time, and a clock that advances 1 ms per expiry. */
function indexOf(due: string[][], pageSize: number) {
  let now = 0;
  const expired: string[] = [];
  return {
    expired,
    clock: () => now,
    page: async (partition: number, startKey: Record<string, unknown> | undefined) => {
      const from = (startKey?.at as number | undefined) ?? 0;
      const ids = due[partition]!.slice(from, from + pageSize);
      const next = from + pageSize < due[partition]!.length ? { at: from + pageSize } : undefined;
      return { ids, next };
    },
    expire: async (id: string) => {
      now++;
      const first = !expired.includes(id);
      expired.push(id);
      return first;
    },
  };
}

const ids = (partition: number, n: number) => Array.from({ length: n }, (_, i) => `res_${partition}_${i}`);

describe('the reservation expiry sweep', () => {
  test('expires every due reservation of every partition, page after page, when it has the time', async () => {
    const index = indexOf([ids(0, 5), ids(1, 0), ids(2, 3)], 2);
    const outcome = await sweepExpired({ ...index, partitions: 3, stopAt: 1_000 });
    expect(outcome).toEqual({ expired: 8, failed: [], backlog: false });
    expect(index.expired.sort()).toEqual([...ids(0, 5), ...ids(2, 3)].sort());
  });

  test('begins no expiry at or after its stop time, and says that some were left for the next run', async () => {
    const index = indexOf([ids(0, 50), ids(1, 50)], 10);
    const outcome = await sweepExpired({ ...index, partitions: 2, stopAt: 30 });
    // The clock advances 1 ms per expiry: 30 begun before the stop time, none after it.
    expect(outcome).toEqual({ expired: 30, failed: [], backlog: true });
    expect(new Set(index.expired).size).toBe(30);
  });

  test('the next run takes up what the last one left', async () => {
    const due = [ids(0, 40)];
    const first = indexOf(due, 10);
    const left = await sweepExpired({ ...first, partitions: 1, stopAt: 25 });
    // What the index still lists is what was not expired; the next run finds it.
    const rest = indexOf([due[0]!.filter((id) => !first.expired.includes(id))], 10);
    const next = await sweepExpired({ ...rest, partitions: 1, stopAt: 1_000 });
    expect([left.backlog, next.backlog]).toEqual([true, false]);
    expect(left.expired + next.expired).toBe(40);
  });

  test('a reservation already released does not count as expired by this run', async () => {
    const index = indexOf([['res_a', 'res_a', 'res_b']], 10);
    expect(await sweepExpired({ ...index, partitions: 1, stopAt: 1_000 })).toEqual({
      expired: 2,
      failed: [],
      backlog: false,
    });
  });

  test('a reservation whose expiry fails is counted, and every other one is still expired', async () => {
    const index = indexOf([ids(0, 4), ids(1, 2)], 10);
    const expire = index.expire;
    const failing = 'res_0_1';
    const outcome = await sweepExpired({
      ...index,
      partitions: 2,
      stopAt: 1_000,
      expire: async (id) => {
        if (id === failing) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
        return expire(id);
      },
    });
    expect(outcome).toEqual({
      expired: 5,
      failed: [{ reservationId: failing, error: 'ThrottlingException' }],
      backlog: false,
    });
    expect(index.expired.sort()).toEqual([...ids(0, 4), ...ids(1, 2)].filter((id) => id !== failing).sort());
    // Still held, it is still in the index: the next run expires it.
    const next = indexOf([[failing]], 10);
    expect(await sweepExpired({ ...next, partitions: 1, stopAt: 1_000 })).toEqual({
      expired: 1,
      failed: [],
      backlog: false,
    });
  });
});
