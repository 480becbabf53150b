import { basename } from 'node:path';
import { STAGES } from '../../lib/stage-config';
import { checkov, ensureCheckov, formatResult } from '../../scripts/checkov';
import { removeSynthesized, synthStage } from './synth';

afterAll(removeSynthesized);

describe('Checkov on every stage’s template', () => {
  beforeAll(() => {
    // The first run installs the pinned Checkov into local/.cache (a download of minutes on a slow link).
    ensureCheckov((m) => console.log(m));
  }, 900_000);

  test('finds nothing that is not fixed or acknowledged where it arises, with its reason', () => {
    const templates = STAGES.map((stage) => synthStage(stage).templatePath);
    const report = checkov(templates);
    expect(report.failed.map((r) => `${basename(r.file_path)} ${formatResult(r)}`)).toEqual([]);
    expect(report.skipped.length).toBeGreaterThan(0);
    // Every acknowledgement says why (Checkov passes the comment through).
    expect(report.skipped.filter((r) => !r.check_result.suppress_comment?.trim()).map(formatResult)).toEqual(
      [],
    );
    // It did scan: every template's resources were checked.
    expect(report.passed).toBeGreaterThan(100 * templates.length);
  }, 300_000);
});
