import { Collection, RECENT_ITEMS } from '../../dynamodb/collection';
import type { Item } from '../../dynamodb/values';

const itemNumber = (n: number): Item => ({
  pk: { S: `p${n % 7}` },
  sk: { N: String(n) },
  body: { M: { n: { N: String(n) }, tags: { SS: ['a', `t${n}`] }, note: { S: `item ${n}` } } },
});

describe('a collection keeps items as text and the most recent as objects too', () => {
  // More than the recent ring holds, so that most reads parse an item's text again.
  const count = RECENT_ITEMS * 2 + 5;
  const collection = new Collection({ hash: 'pk', range: 'sk' });
  for (let n = 0; n < count; n++) collection.insert(itemNumber(n));

  test('every item reads back as written, by key and in each partition in order', () => {
    for (let n = 0; n < count; n++)
      expect(collection.get({ pk: { S: `p${n % 7}` }, sk: { N: String(n) } })).toEqual(itemNumber(n));
    for (let p = 0; p < 7; p++) {
      const read = [...collection.query({ S: `p${p}` }, undefined, true)];
      expect(read).toEqual([...Array(count).keys()].filter((n) => n % 7 === p).map(itemNumber));
    }
  });

  test('a replaced item reads as its replacement, whether or not it was recent', () => {
    const replaced = { ...itemNumber(0), body: { S: 'replaced' } };
    collection.insert(replaced);
    for (let n = 1; n <= RECENT_ITEMS; n++) collection.get({ pk: { S: `p${n % 7}` }, sk: { N: String(n) } });
    expect(collection.get({ pk: { S: 'p0' }, sk: { N: '0' } })).toEqual(replaced);
  });
});
