import type { CustomerState } from '../accounts';
import type { Loaded } from '../shared/event-store';
import { StaleShare, type StaleShareSettings } from '../shared/stale-share';

/** With the StaleShare of writes from remembered customers: above it, they are read again instead. */
export interface KnownCustomersSettings extends StaleShareSettings {
  /** How long a customer this sandbox read or wrote is written from without reading it again. */
  readonly trustMs: number;
  /** At most this many customers are remembered; the least recently remembered are forgotten first. */
  readonly maxCustomers: number;
}

/**
 * The customers one sandbox of the saga last read or wrote, so that an
 * order's steps need not read its customer again: ReserveStock and
 * CapturePayment of an order mostly run in one sandbox, which also wrote the
 * customer's last capture. A capture writes the customer conditional on the
 * version it started from, so a customer moved on elsewhere (another
 * sandbox's capture) fails that write, is forgotten here, and the retry reads
 * it. Where that happens often (many sandboxes share the saga's work, so
 * what each knows is often stale), a failed transaction costs more than the
 * read it saves: past `maxStaleShare` of the writes lately, nothing is
 * trusted until that share, decaying, is below it again (see StaleShare).
 */
export class KnownCustomers {
  private readonly customers = new Map<string, { customer: Loaded<CustomerState>; at: number }>();
  private readonly staleWrites: StaleShare;

  constructor(private readonly settings: KnownCustomersSettings = KNOWN_CUSTOMERS) {
    this.staleWrites = new StaleShare(settings);
  }

  /** `customer` as read (the moment the read was sent) or written (its new version) at `at`. */
  remember(customerId: string, customer: Loaded<CustomerState>, at: number) {
    // A customer not there (yet) is not remembered: orders of one are refused before the saga.
    if (customer.state === null) return;
    const held = this.customers.get(customerId);
    if (held && held.customer.version > customer.version) return;
    this.customers.delete(customerId);
    if (this.customers.size >= this.settings.maxCustomers) {
      this.customers.delete(this.customers.keys().next().value!);
    }
    this.customers.set(customerId, { customer, at });
  }

  forget(customerId: string) {
    this.customers.delete(customerId);
  }

  /** The customer as last seen here, if within `trustMs` of `now` and remembered customers are trusted. */
  trusted(customerId: string, now: number): { customer: Loaded<CustomerState>; at: number } | undefined {
    const held = this.customers.get(customerId);
    if (!held || now - held.at >= this.settings.trustMs || !this.staleWrites.worthGuessing(now))
      return undefined;
    return held;
  }

  /**
   * How a write from a customer not read for it went (remembered here, or
   * handed on by ReserveStock): `stale` if it failed on the customer's
   * version. A handed-on one counts too: it is as much a guess.
   */
  wrote(stale: boolean, now: number) {
    this.staleWrites.record(stale, now);
  }
}

/** The bounds the saga runs with (see `KnownCustomers`). */
export const KNOWN_CUSTOMERS: KnownCustomersSettings = {
  trustMs: 10_000,
  maxStaleShare: 0.2,
  staleHalfLifeMs: 10_000,
  maxCustomers: 10_000,
};
