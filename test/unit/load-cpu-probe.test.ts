import { cpuProbe } from '../../load/cpu-probe';

describe('load: the CPU probe', () => {
  test('times the same workload every time', () => {
    const { ms, digest } = cpuProbe();
    expect(ms).toBeGreaterThan(0);
    // The digest of the workload's output: a change to the workload changes it, and makes the figures of
    // earlier reports incomparable with new ones. Change this only with a note in docs/benchmarks.md.
    expect(digest).toBe('b374159aac4919ae0fb6246fbbee02e8fc55cc86206707206da77f386a525484');
  });
});
