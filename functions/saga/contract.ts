import type { CustomerState } from '../accounts';
import type { KnownShard } from '../inventory';
import type { CancellationReason, Order } from '../orders';
import * as z from '../shared/zod';

/**
 * The contract between the state machine (statemachines/order-saga.asl.json)
 * and the saga's steps: what each Task's `Parameters.Payload` sends, what each
 * step answers, and the closed set of error names a step can raise. The
 * steps parse their input with these schemas; an infra test checks every
 * Task's `Parameters` against them and every error name against the ASL's
 * `Retry` and `Catch`.
 */

const item = z.object({
  productId: z.string().check(z.minLength(1)),
  quantity: z.number().check(z.int(), z.positive()),
  priceCents: z.number().check(z.int(), z.nonnegative()),
});

/** What every step receives: the order as placed (from `OrderPlaced`) and the request's correlation id. */
const placedOrder = {
  orderId: z.string().check(z.minLength(1)),
  customerId: z.string().check(z.minLength(1)),
  items: z.array(item).check(z.minLength(1)),
  totalCents: z.number().check(z.int(), z.nonnegative()),
  deadline: z.iso.datetime(),
  correlationId: z.optional(z.string()),
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** An order as ReserveStock wrote it (the event store's folded state), handed on to ConfirmOrder. */
const orderState = z.custom<Order>(
  (v) =>
    isRecord(v) && typeof v.orderId === 'string' && typeof v.status === 'string' && Array.isArray(v.items),
  'an order state',
);
const loadedOrder = z.object({ state: orderState, version: z.number().check(z.int(), z.positive()) });
const knownShard = z.custom<KnownShard>(
  (v) =>
    isRecord(v) &&
    typeof v.productId === 'string' &&
    Number.isInteger(v.shard) &&
    Number.isInteger(v.version) &&
    isRecord(v.state),
  'a stock shard as last written',
);

/** The customer as ReserveStock read it (null: no such customer), handed on to CapturePayment. */
const loadedCustomer = z.object({
  state: z.custom<CustomerState>(
    (v) => v === null || (isRecord(v) && typeof v.customerId === 'string'),
    'a customer state',
  ),
  version: z.number().check(z.int(), z.nonnegative()),
  /** When ReserveStock read it: CapturePayment starts from it only while it is young. */
  readAt: z.iso.datetime(),
});

const CANCELLATION_REASONS = [
  'OUT_OF_STOCK',
  'PAYMENT_DECLINED',
  'CONFIRMATION_FAILED',
  'TIMEOUT',
  'STEP_FAILED',
] as const satisfies readonly CancellationReason[];

/** Each step's input, by the `action` its Task sends. */
export const STEP_INPUTS = {
  reserve: z.object({
    action: z.literal('reserve'),
    ...placedOrder,
    /** With the fields above, the whole of `OrderPlaced`: what the order is until a step writes to it. */
    placedAt: z.iso.datetime(),
    executionArn: z.string().check(z.minLength(1)),
  }),
  capture: z.object({ action: z.literal('capture'), ...placedOrder, customer: z.optional(loadedCustomer) }),
  confirm: z.object({
    action: z.literal('confirm'),
    ...placedOrder,
    order: z.optional(loadedOrder),
    shards: z.optional(z.array(knownShard)),
  }),
  cancel: z.object({
    action: z.literal('cancel'),
    ...placedOrder,
    reason: z.enum(CANCELLATION_REASONS),
    executionArn: z.string().check(z.minLength(1)),
  }),
} as const;

export const stepInput = z.discriminatedUnion('action', [
  STEP_INPUTS.reserve,
  STEP_INPUTS.capture,
  STEP_INPUTS.confirm,
  STEP_INPUTS.cancel,
]);

export type StepAction = keyof typeof STEP_INPUTS;
export type StepInput<A extends StepAction = StepAction> = z.infer<(typeof STEP_INPUTS)[A]>;

/** Each step's answer (the Task's `$.Payload`), as the next states read it. */
export const STEP_OUTPUTS = {
  reserve: z.union([
    z.object({ proceed: z.literal(false) }),
    z.object({
      proceed: z.literal(true),
      order: loadedOrder,
      shards: z.array(knownShard),
      customer: loadedCustomer,
    }),
  ]),
  capture: z.object({ paymentId: z.string().check(z.minLength(1)) }),
  confirm: z.object({ status: z.literal('CONFIRMED') }),
  cancel: z.object({ cancelled: z.boolean(), reason: z.enum(CANCELLATION_REASONS) }),
} as const;

export type StepOutput<A extends StepAction> = z.infer<(typeof STEP_OUTPUTS)[A]>;

/**
 * A step's business outcome: the state machine `Catch`es it by name and
 * cancels the order with the matching reason. Never retried.
 */
export const BUSINESS_ERRORS = [
  'OutOfStock',
  'PaymentDeclined',
  'ConfirmationFailed',
  'DeadlineExceeded',
] as const;
/** A failure that may pass (throttling, a transaction conflict, a network error): retried with backoff. */
export const TRANSIENT_ERROR = 'TransientError';
/**
 * Anything else (a bug, an input that breaks the contract): retried a few
 * times in case it passes, then the order is cancelled with `STEP_FAILED`, so
 * a bug never pages as a saga timing out.
 */
export const UNEXPECTED_ERROR = 'StepFailed';

/** Every error name a saga step can raise. */
export const STEP_ERRORS = [...BUSINESS_ERRORS, TRANSIENT_ERROR, UNEXPECTED_ERROR] as const;
export type StepErrorName = (typeof STEP_ERRORS)[number];
export type BusinessErrorName = (typeof BUSINESS_ERRORS)[number];

/** The business outcomes each step may raise, and the cancellation reason the state machine must give each. */
export const STEP_OUTCOMES: { readonly [A in StepAction]: readonly BusinessErrorName[] } = {
  reserve: ['OutOfStock', 'DeadlineExceeded'],
  capture: ['PaymentDeclined', 'DeadlineExceeded'],
  confirm: ['ConfirmationFailed', 'DeadlineExceeded'],
  cancel: [],
};
export const REASON_OF: Readonly<Record<BusinessErrorName | typeof UNEXPECTED_ERROR, CancellationReason>> = {
  OutOfStock: 'OUT_OF_STOCK',
  PaymentDeclined: 'PAYMENT_DECLINED',
  ConfirmationFailed: 'CONFIRMATION_FAILED',
  DeadlineExceeded: 'TIMEOUT',
  StepFailed: 'STEP_FAILED',
};
