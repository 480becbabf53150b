import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { STAGE_SETTINGS } from '../../config/stages';
import { CommerceStack } from '../../lib/commerce-stack';
import { addNagChecks } from '../../lib/nag';
import { stageConfig } from '../../lib/stage-config';
import type { StageSettingsFile } from '../../lib/stage-settings';

/**
 * Synthesizes a stage as `bin/app.ts` does, cdk-nag included, but without
 * bundling (the promises checked here are the template's) into a fresh
 * directory. Throws as `cdk synth` fails, e.g. on an unacknowledged finding.
 */
export function synthStage(
  stage: string,
  context: Record<string, string> = {},
  settings: StageSettingsFile = TEST_SETTINGS,
) {
  const outdir = mkdtempSync(join(tmpdir(), `commerce-${stage}-`));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], ...context }, ...UNVALIDATED });
  const config = stageConfig(stage, (key) => context[key], settings);
  const stack = new CommerceStack(app, `Commerce-${stage}`, { config });
  addNagChecks(app);
  const assembly = app.synth();
  const templatePath = assembly.getStackByName(stack.stackName).templateFullPath;
  return {
    config,
    stack,
    outdir,
    templatePath,
    template: Template.fromJSON(JSON.parse(readFileSync(templatePath, 'utf8'))),
  };
}

/**
 * The tests' apps skip CDK's built-in CloudFormation validation: it only
 * warns, and it made this project's infra tests take 31 s instead of 9–12 s
 * (measured 2026-11-30), while `cfn-lint.test.ts` lints every stage's
 * template with cfn-lint itself and fails on what it finds. cdk-nag's checks
 * still run.
 */
export const UNVALIDATED = { builtinCloudFormationValidation: false } as const;

const outdirs: string[] = [];

/** The external issuer prod is synthesized with in the tests (a deployment names its identity provider's). */
export const PROD_ISSUER = 'https://login.commerce-identity.internal/';

/**
 * config/stages.ts as a deployer fills it in: the committed file's staging and
 * prod are placeholders, which synthesis refuses (a test holds it to that), so
 * the tests synthesize them with these. dev is the committed file's own.
 */
export const TEST_SETTINGS: StageSettingsFile = {
  dev: STAGE_SETTINGS.dev,
  staging: {
    account: '111111111111',
    region: 'eu-west-1',
    identity: {
      kind: 'userPool',
      callbackUrls: ['https://shop.staging.commerce-shop.internal/callback'],
      logoutUrls: ['https://shop.staging.commerce-shop.internal/'],
    },
    alarmEmail: 'staging-alarms@commerce-ops.internal',
    tags: { owner: 'commerce-team', costCentre: 'cc-1234' },
  },
  prod: {
    account: '222222222222',
    region: 'eu-west-1',
    identity: { kind: 'external', issuer: PROD_ISSUER, audience: ['commerce-api'] },
    alarmEmail: 'oncall@commerce-ops.internal',
    tags: { owner: 'commerce-team', costCentre: 'cc-1234' },
  },
};

/** Removes every assembly this test file synthesized. */
export function removeSynthesized() {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A template's resources as plain JSON, for the checks that walk all of them. */
export type Resources = Record<
  string,
  { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }
>;
export const resourcesOf = (template: Template): Resources => template.toJSON().Resources as Resources;

/** Every logical id a value refers to (Ref, Fn::GetAtt, and `${Id...}` of Fn::Sub), however deep. */
export function referencedIds(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const v of value) referencedIds(v, into);
  } else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'Ref' && typeof v === 'string' && !v.startsWith('AWS::')) into.add(v);
      else if (key === 'Fn::GetAtt') into.add(Array.isArray(v) ? String(v[0]) : String(v).split('.')[0]!);
      else referencedIds(v, into);
    }
  }
  return into;
}
