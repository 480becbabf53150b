import { STAGES } from '../../lib/stage-config';
import { cfnLint, ensureCfnLint, formatMatch } from '../../scripts/cfn-lint';
import { removeSynthesized, synthStage } from './synth';

afterAll(removeSynthesized);

/**
 * Warnings CDK's own output always raises, each with why it is harmless;
 * any other warning fails as an error does.
 */
const ACCEPTED_WARNINGS: Readonly<Record<string, string>> = {
  // CDK makes a function depend on its role's default policy as well as reading the role's ARN.
  W3005: 'a DependsOn that a GetAtt already implies',
};

describe('cfn-lint on every stage’s template', () => {
  beforeAll(() => {
    // The first run installs the pinned cfn-lint into local/.cache (a download of minutes on a slow link).
    ensureCfnLint((m) => console.log(m));
  }, 600_000);

  test('reports no error and no warning outside the accepted ones', () => {
    const templates = STAGES.map((stage) => synthStage(stage).templatePath);
    const matches = cfnLint(templates);
    const unaccepted = matches.filter((m) => m.Level === 'Error' || !(m.Rule.Id in ACCEPTED_WARNINGS));
    expect(unaccepted.map(formatMatch)).toEqual([]);
  }, 120_000);
});
