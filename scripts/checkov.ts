/**
 * Checkov, installed by the project itself (see `python-tool.ts`: a venv
 * under `local/.cache/` with the pinned Checkov from PyPI). The first install
 * downloads Checkov and its dependencies (some 150 MB) and can take minutes.
 *
 *   npx tsx scripts/checkov.ts <template.json>...   # installs if needed, scans, exits 1 on a failed check
 *
 * A finding is acknowledged where it arises: `Metadata.checkov.skip` on the
 * resource (`lib/checkov.ts`'s `acknowledgeCheckov`), with its reason; Checkov
 * then reports it as skipped, not failed.
 */
import { spawnSync } from 'node:child_process';
import { ensurePythonTool } from './python-tool';

export const CHECKOV_VERSION = '3.3.30';

export const ensureCheckov = (log?: (message: string) => void): string =>
  ensurePythonTool({ name: 'checkov', version: CHECKOV_VERSION, executable: 'checkov' }, log);

/** One check's result on one resource, as Checkov's JSON output gives it. */
export interface CheckovResult {
  readonly check_id: string;
  readonly check_name: string;
  readonly resource: string;
  readonly file_path: string;
  /** Checkov's `SKIPPED` carries the acknowledgement's comment. */
  readonly check_result: { readonly result: string; readonly suppress_comment?: string };
}

export interface CheckovReport {
  readonly failed: CheckovResult[];
  readonly skipped: CheckovResult[];
  readonly passed: number;
}

/**
 * Scans CloudFormation templates with the project's Checkov, in one run (its
 * start-up is most of its time), offline: nothing downloaded from Prisma
 * Cloud, no update check. Each result's `file_path` says which template.
 */
export function checkov(templates: readonly string[], log?: (message: string) => void): CheckovReport {
  const bin = ensureCheckov(log);
  const result = spawnSync(
    bin,
    [
      ...templates.flatMap((t) => ['--file', t]),
      '--framework',
      'cloudformation',
      '--output',
      'json',
      '--compact',
      '--soft-fail',
      '--skip-download',
    ],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, BC_SKIP_MAPPING: 'TRUE', CKV_NO_UPDATE_CHECK: 'true' },
    },
  );
  if (result.status !== 0) throw new Error(`checkov failed (exit ${result.status}):\n${result.stderr}`);
  // Not --quiet: it leaves the skipped (acknowledged) checks out of the JSON too.
  const output = JSON.parse(result.stdout || '{}') as {
    results?: { failed_checks?: CheckovResult[]; skipped_checks?: CheckovResult[] };
    summary?: { passed?: number };
  };
  const results = output.results ?? {};
  return {
    failed: results.failed_checks ?? [],
    skipped: results.skipped_checks ?? [],
    passed: output.summary?.passed ?? 0,
  };
}

export const formatResult = (r: CheckovResult) => `${r.check_id} ${r.resource}: ${r.check_name}`;

if (require.main === module) {
  const templates = process.argv.slice(2);
  if (templates.length === 0) {
    console.error('usage: tsx scripts/checkov.ts <template.json>...');
    process.exit(2);
  }
  const report = checkov(templates, (m) => console.error(m));
  console.log(
    `${report.passed} passed, ${report.failed.length} failed, ${report.skipped.length} acknowledged`,
  );
  for (const r of report.failed) console.log(`FAILED ${r.file_path} ${formatResult(r)}`);
  process.exit(report.failed.length > 0 ? 1 : 0);
}
