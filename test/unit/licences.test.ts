import { approved } from '../../scripts/licences';

// SPDX license expressions (spdx.github.io/spdx-spec, annex D): the check passes an expression that can
// be met with OSI-approved licences alone.
describe('the licence check', () => {
  test.each([
    ['MIT', true],
    ['Apache-2.0', true],
    ['(MIT OR CC0-1.0)', true],
    ['(MIT AND Zlib)', true],
    ['(BSD-2-Clause OR MIT OR Apache-2.0)', true],
    ['GPL-2.0+', true],
    ['CC-BY-4.0', false],
    ['WTFPL', false],
    ['(MIT AND CC-BY-4.0)', false],
    ['SEE LICENSE IN LICENSE.txt', false],
    ['UNKNOWN', false],
    ['(Apache-2.0 AND (MIT OR CC0-1.0))', true],
  ])('%s: %s', (expression, expected) => {
    expect(approved(expression)).toBe(expected);
  });
});
