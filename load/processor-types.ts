/**
 * The types the mix's Artillery processor (processor.ts) works with: the
 * runner's settings, the lines of the run's ledger, and the part of
 * Artillery's hook API the processors use. processor.ts re-exports them.
 */

export interface ProcessorSettings {
  /** The seeded customers and each one's shop token (its owner's): it places its own orders and holds stock. */
  readonly customers: readonly { readonly customerId: string; readonly token: string }[];
  /**
   * Where a new customer (the create_customer scenario) gets a token of a `sub` of its own, to register
   * itself: the local issuer's POST /_local/token. Unset (a stage): it is created by the operator's
   * token for a new `ownerSub`.
   */
  readonly tokenEndpoint?: string;
  /** The operator's token (a stage's new customers). */
  readonly adminToken: string;
  readonly productIds: readonly string[];
  /** Share of placed orders whose saga is followed by polling (0..1). */
  readonly pollFraction: number;
  readonly pollIntervalMs: number;
  /** A followed saga not final within this is counted as missing the limit. */
  readonly sagaLimitMs: number;
  /** JSON lines, one per placed order. */
  readonly ledgerFile: string;
  /** JSON lines, one per reservation sent and one per answer (`ReservationLine`); unset, none are kept. */
  readonly reservationsFile?: string;
  /** Orders are sent with `Prefer: wait=N`; unset, without the header. */
  readonly waitSeconds?: number;
}

/**
 * One line per order sent (without `orderId`) and one per order acknowledged
 * (with it) or refused (with `refusedWith`), tied by the request's
 * Idempotency-Key: an order the platform placed but whose answer the client
 * never saw (a timeout) is recovered after the run by sending the same
 * request again, which idempotency answers with the first response.
 */
export interface LedgerLine {
  readonly idempotencyKey: string;
  readonly orderId?: string;
  /** The status of an answer that placed nothing (a 4xx such as `429`): the order is not recovered. */
  readonly refusedWith?: number;
  readonly customerId: string;
  readonly items: readonly { productId: string; quantity: number }[];
  /** Epoch ms when the POST was sent. */
  readonly placedAt: number;
}

/**
 * A reservation of the run: one line when it is sent, one when it is
 * answered, with its id and expiry (`201`) or the status that refused it,
 * tied by the request's Idempotency-Key. The stock a product holds reserved
 * after the run is what its live reservations hold (the invariants).
 */
export interface ReservationLine {
  readonly idempotencyKey: string;
  readonly productId: string;
  /** The customer whose caller sent it (an Idempotency-Key is its caller's: a resend comes from the same). */
  readonly customerId?: string;
  readonly quantity: number;
  /** Epoch ms when the POST was sent. */
  readonly sentAt: number;
  readonly reservationId?: string;
  /** ISO time at which it expires (and its stock becomes available again). */
  readonly expiresAt?: string;
  readonly refusedWith?: number;
}

// The subset of Artillery's processor API used here.
/** What Artillery hands a processor's hooks (the part of it they use); flash-sale-processor.ts shares them. */
export interface Vars {
  [name: string]: unknown;
}
export interface Context {
  vars: Vars;
}
export interface RequestParams {
  json?: unknown;
  headers?: Record<string, string>;
}
export interface Response {
  statusCode: number;
  body: unknown;
}
export interface Events {
  emit(kind: 'counter' | 'histogram', name: string, value: number): void;
}
export type Next = (error?: Error) => void;
