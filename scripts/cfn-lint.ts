/**
 * cfn-lint, installed by the project itself (see `python-tool.ts`: a venv
 * under `local/.cache/` with the pinned cfn-lint from PyPI). The first install
 * downloads about 40 MB (cfn-lint and its dependencies) and can take minutes.
 *
 *   npx tsx scripts/cfn-lint.ts <template.json>...   # installs if needed, lints, exits 1 on an error
 */
import { spawnSync } from 'node:child_process';
import { ensurePythonTool } from './python-tool';

export const CFN_LINT_VERSION = '1.58.0';

/** Installs the pinned cfn-lint once (idempotent, cached); returns the path of its executable. */
export const ensureCfnLint = (log?: (message: string) => void): string =>
  ensurePythonTool({ name: 'cfn-lint', version: CFN_LINT_VERSION, executable: 'cfn-lint' }, log);

/** One finding of cfn-lint's JSON output. */
export interface CfnLintMatch {
  readonly Level: 'Error' | 'Warning' | 'Informational';
  readonly Message: string;
  readonly Filename: string;
  readonly Rule: { readonly Id: string };
  readonly Location: { readonly Path?: readonly (string | number)[] };
}

/** Lints the templates with the project's cfn-lint and returns every finding, errors and warnings alike. */
export function cfnLint(templates: readonly string[], log?: (message: string) => void): CfnLintMatch[] {
  const cfnLintBin = ensureCfnLint(log);
  // `none`: the exit code would only say what the findings say; they are all returned and judged by the caller.
  const result = spawnSync(
    cfnLintBin,
    ['--format', 'json', '--non-zero-exit-code', 'none', '--', ...templates],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`cfn-lint failed (exit ${result.status}):\n${result.stderr}`);
  return JSON.parse(result.stdout || '[]') as CfnLintMatch[];
}

export const formatMatch = (m: CfnLintMatch) =>
  `${m.Level} ${m.Rule.Id} ${m.Filename} ${(m.Location.Path ?? []).join('/')}: ${m.Message}`;

if (require.main === module) {
  const templates = process.argv.slice(2);
  if (templates.length === 0) {
    console.error('usage: tsx scripts/cfn-lint.ts <template.json>...');
    process.exit(2);
  }
  const matches = cfnLint(templates, (m) => console.error(m));
  for (const m of matches) console.log(formatMatch(m));
  process.exit(matches.some((m) => m.Level === 'Error') ? 1 : 0);
}
