import type { LedgerLine, ReservationLine } from './processor';

/**
 * A ledger's requests by Idempotency-Key (a line when one is sent, another
 * when it is answered): the answer on each where one came, else the line
 * sent, and which of them the client never saw answered.
 */
function byIdempotencyKey<Line extends { readonly idempotencyKey: string }>(
  lines: readonly Line[],
  isAnswer: (line: Line) => boolean,
) {
  const byKey = new Map<string, Line>();
  for (const line of lines) {
    const seen = byKey.get(line.idempotencyKey);
    if (seen === undefined || !isAnswer(seen)) byKey.set(line.idempotencyKey, line);
  }
  const last = [...byKey.values()];
  return { answered: last.filter(isAnswer), unanswered: last.filter((line) => !isAnswer(line)) };
}

/**
 * The run's orders: those placed, with their id, and those whose answer the
 * client never saw (the request timed out, its connection failed, a 5xx),
 * which may have been placed all the same. An order refused with a 4xx (a
 * `429` has no effect) is neither: it was answered and placed nothing, so it
 * is not sent again.
 */
export function ordersOfLedger(lines: readonly LedgerLine[]) {
  const { answered, unanswered } = byIdempotencyKey(
    lines,
    (line) => line.orderId !== undefined || line.refusedWith !== undefined,
  );
  return {
    placed: answered.filter((line): line is LedgerLine & { orderId: string } => line.orderId !== undefined),
    unanswered,
  };
}

/**
 * The run's reservations: the answer to each (made, or refused with a 4xx),
 * and those whose answer the client never saw, which may have been made all
 * the same.
 */
export const reservationsOfLedger = (lines: readonly ReservationLine[]) =>
  byIdempotencyKey(lines, (line) => line.reservationId !== undefined || line.refusedWith !== undefined);
