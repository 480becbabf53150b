/**
 * After a run: what became of the requests whose answer the client never
 * saw (a 5xx, a timeout, a refused connection). Each is sent again by its
 * own caller with its own Idempotency-Key, as a client that lost an answer
 * does, and the platform answers the first answer.
 */
import { ordersOfLedger, reservationsOfLedger } from './ledger';
import type { LedgerLine, ReservationLine } from './processor';
import { mapPool, request, sleep, type Target } from './target';
import { bearer } from './tokens';

/**
 * Every order the run sent, with its id. An order whose answer the client did
 * not see (its request timed out) may still have been placed: the same
 * request is sent again with the same Idempotency-Key, which the platform
 * answers with the first response (placing it now if it never arrived), so
 * the invariants account for every order the platform holds.
 */
export async function recoverUnanswered(
  target: Target,
  lines: readonly LedgerLine[],
  tokenOf: ReadonlyMap<string, string>,
) {
  const { placed, unanswered } = ordersOfLedger(lines);
  const recovered = await mapPool(unanswered, 8, async (line) => {
    const body = { customerId: line.customerId, items: line.items };
    for (let attempt = 1; attempt <= 10; attempt++) {
      // Idempotency keys belong to the caller: the order's own customer sends it again.
      const answer = await request<{ orderId?: string }>(target, 'POST', '/orders', body, {
        'idempotency-key': line.idempotencyKey,
        ...bearer(tokenOf.get(line.customerId) ?? ''),
      });
      if (answer.status === 202 && answer.body.orderId) return { ...line, orderId: answer.body.orderId };
      // The first request may still be in progress, or refused for load: wait for it.
      await sleep(1000 * attempt);
    }
    throw new Error(`order with Idempotency-Key ${line.idempotencyKey} could not be recovered`);
  });
  return {
    ledger: [...placed, ...recovered],
    recovered: recovered.length,
  };
}

/**
 * Every reservation the run sent, with its answer. One whose answer the
 * client did not see (a 5xx, a timeout) may still have been made: the same
 * request is sent again by the same caller with the same Idempotency-Key,
 * which the platform answers with the first answer (making it now if it
 * never arrived), so `reserved` is checked exactly, not within a range. A
 * line that names no customer (a ledger from before they did) is left as it
 * is: its caller's token is not known.
 */
export async function recoverUnansweredReservations(
  target: Target,
  lines: readonly ReservationLine[],
  tokenOf: ReadonlyMap<string, string>,
) {
  const { answered, unanswered } = reservationsOfLedger(lines);
  const recovered = await mapPool(unanswered, 8, async (line): Promise<ReservationLine> => {
    const token = line.customerId === undefined ? undefined : tokenOf.get(line.customerId);
    if (token === undefined) return line;
    for (let attempt = 1; attempt <= 10; attempt++) {
      const answer = await request<{ reservationId?: string; expiresAt?: string }>(
        target,
        'POST',
        `/products/${line.productId}/reservations`,
        { quantity: line.quantity },
        { 'idempotency-key': line.idempotencyKey, ...bearer(token) },
      );
      if (answer.status === 201 && answer.body.reservationId)
        return {
          ...line,
          reservationId: answer.body.reservationId,
          expiresAt: String(answer.body.expiresAt),
        };
      if (answer.status >= 400 && answer.status < 500 && answer.status !== 429)
        return { ...line, refusedWith: answer.status };
      // The first request may still be in progress, or refused for load: wait for it.
      await sleep(1000 * attempt);
    }
    throw new Error(`reservation with Idempotency-Key ${line.idempotencyKey} could not be recovered`);
  });
  return {
    reservations: [...answered, ...recovered],
    recovered: recovered.filter((line) => line.reservationId !== undefined || line.refusedWith !== undefined)
      .length,
  };
}
