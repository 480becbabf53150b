import type { Customer } from '../../functions/accounts/domain';
import { KNOWN_CUSTOMERS, KnownCustomers } from '../../functions/saga/known-customers';

const ada = (capturedCents: number): Customer =>
  ({
    customerId: 'cus_1',
    creditLimitCents: 10_000,
    capturedCents,
  }) as Customer;

describe('KnownCustomers', () => {
  it('trusts a customer read or written within trustMs, the newest version only', () => {
    const known = new KnownCustomers();
    known.remember('cus_1', { state: ada(0), version: 1 }, 1_000);
    known.remember('cus_1', { state: ada(100), version: 2 }, 2_000);
    known.remember('cus_1', { state: ada(0), version: 1 }, 3_000); // an older read, answered late
    expect(known.trusted('cus_1', 2_000 + KNOWN_CUSTOMERS.trustMs - 1)?.customer.version).toBe(2);
    expect(known.trusted('cus_1', 2_000 + KNOWN_CUSTOMERS.trustMs)).toBeUndefined();
    known.forget('cus_1');
    expect(known.trusted('cus_1', 2_001)).toBeUndefined();
  });

  it('does not remember a customer that is not there', () => {
    const known = new KnownCustomers();
    known.remember('cus_1', { state: null, version: 0 }, 1_000);
    expect(known.trusted('cus_1', 1_000)).toBeUndefined();
  });

  it('trusts nothing while many writes from what it knew were stale, and again once that has decayed', () => {
    const known = new KnownCustomers();
    for (let i = 0; i < 3; i++) known.wrote(true, 0); // a stale share of 0.1, 0.19, then 0.271
    known.remember('cus_1', { state: ada(0), version: 1 }, 0);
    expect(known.trusted('cus_1', 0)).toBeUndefined();
    // Halved every 10 s: 0.205 after 4 s, 0.192 after 5 s (below 0.2).
    expect(known.trusted('cus_1', 4_000)).toBeUndefined();
    expect(known.trusted('cus_1', 5_000)?.customer.version).toBe(1);
  });

  it('a write that was not stale lowers the stale share', () => {
    const known = new KnownCustomers();
    for (let i = 0; i < 3; i++) known.wrote(true, 0);
    known.wrote(false, 0); // 0.244
    known.wrote(false, 0); // 0.22
    known.wrote(false, 0); // 0.198
    known.remember('cus_1', { state: ada(0), version: 1 }, 0);
    expect(known.trusted('cus_1', 0)?.customer.version).toBe(1);
  });

  it('forgets the least recently remembered past maxCustomers', () => {
    const known = new KnownCustomers({ ...KNOWN_CUSTOMERS, maxCustomers: 2 });
    for (const id of ['cus_1', 'cus_2', 'cus_1', 'cus_3'])
      known.remember(id, { state: ada(0), version: 1 }, 0);
    expect(['cus_1', 'cus_2', 'cus_3'].map((id) => known.trusted(id, 0) !== undefined)).toEqual([
      true,
      false,
      true,
    ]);
  });
});
