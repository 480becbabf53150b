/**
 * The given/when/then spec of a decider, shared by the domain tests:
 *
 *   const spec = deciderSpec(orderDecider);
 *   spec.given(placed).when(confirm).thenDecides([confirmed]);
 *   spec.given(placed, cancelled).when(confirm).thenRejects({ code: 'ORDER_FINAL', status: 'CANCELLED' });
 *
 * `given` folds past events with the decider's own `evolve` (from its initial
 * state), `when` decides the command on that state, `thenDecides` expects
 * exactly those events (none: the command was already done) and `thenRejects`
 * exactly that rejection. A decision of the other kind fails the test. (Not
 * `then`: an object with a `then` method is taken for a promise by `await`.)
 */
import type { Decider, Decision, Rejection } from '../../functions/shared/decider';
import type { DomainEvent } from '../../functions/shared/events';
import { foldEvents } from '../../functions/shared/events';

export function deciderSpec<C, S, E extends DomainEvent, R extends Rejection>(decider: Decider<C, S, E, R>) {
  const given = (...past: E[]) => {
    const state = foldEvents(decider, decider.initial, past);
    return {
      /** The state the past events fold to, for a test of `evolve`. */
      state,
      when(command: C) {
        const decision: Decision<E, R> = decider.decide(command, state);
        return {
          decision,
          thenDecides(events: readonly E[]) {
            expect(decision).toEqual({ events });
            return { state: foldEvents(decider, state, events) };
          },
          thenRejects(rejection: R) {
            expect(decision).toEqual({ rejection });
          },
        };
      },
    };
  };
  return { given };
}
