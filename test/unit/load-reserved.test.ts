import { expectedReserved } from '../../load/invariants';
import type { ReservationLine } from '../../load/processor';

describe('the reserved invariant: what a product must hold reserved after a run', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const later = new Date(now + 60_000).toISOString();
  const earlier = new Date(now - 1_000).toISOString();
  const sent = (key: string, productId = 'prd_a', quantity = 1): ReservationLine => ({
    idempotencyKey: key,
    productId,
    quantity,
    sentAt: now - 10_000,
  });

  test('live reservations are held exactly; refused ones not at all; other products’ not counted', () => {
    const lines: ReservationLine[] = [
      sent('k1'),
      { ...sent('k1'), reservationId: 'res_1', expiresAt: later },
      sent('k2', 'prd_a', 2),
      { ...sent('k2', 'prd_a', 2), reservationId: 'res_2', expiresAt: later },
      sent('k3'),
      { ...sent('k3'), refusedWith: 409 },
      sent('k4', 'prd_b'),
      { ...sent('k4', 'prd_b'), reservationId: 'res_4', expiresAt: later },
    ];
    expect(expectedReserved('prd_a', 0, lines, [], now)).toEqual({ exactly: 3, unsure: 0 });
    expect(expectedReserved('prd_a', 5, lines, [], now)).toEqual({ exactly: 8, unsure: 0 });
  });

  test('an expired one not yet swept, an unanswered one and a PENDING order may or may not hold stock', () => {
    const lines: ReservationLine[] = [
      sent('k1'),
      { ...sent('k1'), reservationId: 'res_1', expiresAt: earlier },
      sent('k2', 'prd_a', 2),
    ];
    const pending = [
      {
        items: [
          { productId: 'prd_a', quantity: 4 },
          { productId: 'prd_b', quantity: 1 },
        ],
      },
    ];
    expect(expectedReserved('prd_a', 0, lines, pending, now)).toEqual({ exactly: 0, unsure: 7 });
  });

  test('an answer read before its sent line (lines of concurrent users interleave) still counts once', () => {
    const lines: ReservationLine[] = [
      { ...sent('k1'), reservationId: 'res_1', expiresAt: later },
      sent('k1'),
    ];
    expect(expectedReserved('prd_a', 0, lines, [], now)).toEqual({ exactly: 1, unsure: 0 });
  });
});
