import { putEventsRefuses, validatePutEventsFaults } from '@commerce/local-cloud';

describe('EventBridge PutEvents faults: their settings', () => {
  test('a share of entries and of calls, an entry error code, a count; off when left out', () => {
    expect(validatePutEventsFaults({})).toEqual({ entries: 0, entryError: 'InternalFailure', calls: 0 });
    expect(validatePutEventsFaults({ entries: 0.2, entryError: 'ThrottlingException', count: 3 })).toEqual({
      entries: 0.2,
      entryError: 'ThrottlingException',
      calls: 0,
      count: 3,
    });
    expect(() => validatePutEventsFaults({ calls: 2 })).toThrow(/calls/);
    expect(() => validatePutEventsFaults({ entryError: 'Nope' })).toThrow(/entryError/);
    expect(() => validatePutEventsFaults({ count: 0 })).toThrow(/count/);
    expect(() => validatePutEventsFaults({ lost: 1 })).toThrow(/unknown field lost/);
  });

  test('each refusal is drawn at its rate and counted, and `count` bounds entries and calls together', () => {
    const faults = validatePutEventsFaults({ entries: 0.5, calls: 1, count: 2 });
    const refused = { entries: 0, calls: 0 };
    expect(putEventsRefuses(faults, 'entries', refused, () => 0.6)).toBe(false);
    expect(putEventsRefuses(faults, 'entries', refused, () => 0.4)).toBe(true);
    expect(putEventsRefuses(faults, 'calls', refused, () => 0.99)).toBe(true);
    expect(refused).toEqual({ entries: 1, calls: 1 });
    expect(putEventsRefuses(faults, 'calls', refused, () => 0)).toBe(false);
    expect(putEventsRefuses(validatePutEventsFaults({}), 'calls', { entries: 0, calls: 0 }, () => 0)).toBe(
      false,
    );
  });
});
