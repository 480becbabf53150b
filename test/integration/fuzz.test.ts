import { join } from 'node:path';
import { ensureSchemathesis, fuzz } from '../../scripts/fuzz';
import { apiUrl, awsEndpoint } from '../support/api';

/**
 * The short fuzz of `npm run fuzz` (scripts/fuzz.ts) against the suite's local
 * cloud: a few hundred cases generated from the OpenAPI document, valid and
 * invalid, with no 5xx, every answer as the document describes it, and no
 * write from a request answered 4xx. A failure prints Schemathesis' report,
 * with the seed that replays it (`npm run fuzz -- --seed K --cases 10`).
 */

/** Generated cases per operation; Schemathesis' coverage phase adds its own (some 550 requests in all). */
const CASES_PER_OPERATION = 10;
/** The run's time budget: on a busy machine it ends with fewer cases (a few hundred) rather than later. */
const SECONDS = 30;

describe('fuzzing from the OpenAPI document', () => {
  beforeAll(() => {
    // The first run installs the pinned Schemathesis into local/.cache (a download of about a minute).
    ensureSchemathesis((m) => console.log(m));
  }, 600_000);

  test('finds no 5xx, no answer outside the document and no write from a 4xx', async () => {
    const result = await fuzz({
      apiUrl: apiUrl(),
      awsEndpoint: awsEndpoint(),
      cases: CASES_PER_OPERATION,
      seconds: SECONDS,
      // The long run's stateful sequences are left out: the budget goes to more single requests.
      phases: ['examples', 'coverage', 'fuzzing'],
      reportDir: join(__dirname, '..', '..', 'local', '.cache', 'fuzz', 'report-test'),
    });
    // Each failure with its request as a curl command, the summary and the seed that replays the run.
    const report = /=+ FAILURES =+[\s\S]*$/.exec(result.output)?.[0] ?? result.output.slice(-20_000);
    expect({ exitCode: result.exitCode, failures: result.exitCode === 0 ? '' : report }).toEqual({
      exitCode: 0,
      failures: '',
    });
    // A run that sent nothing would pass too: it must have tested every operation of the document.
    const selected = /Selected: (\d+)\/(\d+)/.exec(result.output);
    const tested = /Tested: (\d+)/.exec(result.output);
    expect({ selected: selected?.[1], tested: tested?.[1] }).toEqual({
      selected: selected?.[2],
      tested: selected?.[2],
    });
    expect(Number(selected?.[2])).toBeGreaterThanOrEqual(12);
  }, 120_000);
});
