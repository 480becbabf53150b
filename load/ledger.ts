import type { LedgerLine, ReservationLine } from './processor';

/**
 * The run's orders by Idempotency-Key, from its ledger (a line when an order
 * is sent, another when it is answered): those placed, with their id, and
 * those whose answer the client never saw (the request timed out or its
 * connection failed), which may have been placed all the same. An order
 * refused with a 4xx (a `429` has no effect) is neither: it was answered and
 * placed nothing, so it is not sent again.
 */
export function ordersOfLedger(lines: readonly LedgerLine[]) {
  const byKey = new Map<string, LedgerLine>();
  const answered = (line: LedgerLine | undefined) =>
    line?.orderId !== undefined || line?.refusedWith !== undefined;
  for (const line of lines) {
    if (!answered(byKey.get(line.idempotencyKey))) byKey.set(line.idempotencyKey, line);
  }
  const lastLines = [...byKey.values()];
  return {
    placed: lastLines.filter((line): line is LedgerLine & { orderId: string } => line.orderId !== undefined),
    unanswered: lastLines.filter((line) => !answered(line)),
  };
}

/**
 * The run's reservations by Idempotency-Key (a line when one is sent, another
 * when it is answered): the last word on each, and those whose answer the
 * client never saw (a 5xx, a timeout, a refused connection), which may have
 * been made all the same.
 */
export function reservationsOfLedger(lines: readonly ReservationLine[]) {
  const byKey = new Map<string, ReservationLine>();
  const answered = (line: ReservationLine | undefined) =>
    line?.reservationId !== undefined || line?.refusedWith !== undefined;
  for (const line of lines) {
    if (!answered(byKey.get(line.idempotencyKey))) byKey.set(line.idempotencyKey, line);
  }
  const lastLines = [...byKey.values()];
  return { answered: lastLines.filter(answered), unanswered: lastLines.filter((line) => !answered(line)) };
}
