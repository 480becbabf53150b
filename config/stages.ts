/**
 * The stages' settings: where each is deployed, who signs its tokens, who is
 * paged, whose bill it is. Edit this file (and commit it) to deploy staging
 * or prod; `-c stage=<stage>` picks the stage, nothing else comes from the
 * command line. Types and checks: `lib/stage-settings.ts`; the platform's
 * shape per stage (throttles, concurrency, retention): `lib/stage-config.ts`;
 * how to deploy: `docs/deploy.md`.
 *
 * Synthesis of staging or prod fails, naming each setting, while any of its
 * values below is unset or a placeholder (`<...>`, or an example.com/.org/.net
 * URL or address). dev needs none: it makes its own Cognito user pool and
 * deploys to the account and region of your credentials.
 *
 * No secret goes here, ever: name it (a Secrets Manager secret's name) and the
 * pipeline or the tool that needs it reads it with its own rights. A stage's
 * own user pool has one secret, the operators' client's, which Cognito keeps.
 */
import type { StageSettingsFile } from '../lib/stage-settings';

/** Local callbacks only: a developer's shop on their machine. */
const LOCAL_SHOP = {
  callbackUrls: ['http://localhost:3000/callback'],
  logoutUrls: ['http://localhost:3000/'],
} as const;

export const STAGE_SETTINGS: StageSettingsFile = {
  dev: {
    account: undefined,
    region: undefined,
    identity: { kind: 'userPool', ...LOCAL_SHOP },
    alarmEmail: undefined,
    tags: { owner: undefined, costCentre: undefined },
  },
  staging: {
    account: '<staging AWS account id>',
    region: '<staging region>',
    // The testers' shop may be added here (https); the pipeline's load runs use the operators' client.
    identity: { kind: 'userPool', ...LOCAL_SHOP },
    alarmEmail: '<staging alarm address>',
    tags: { owner: '<team>', costCentre: '<cost centre>' },
  },
  prod: {
    account: '<prod AWS account id>',
    region: '<prod region>',
    identity: {
      kind: 'external',
      // Your identity provider's issuer (the `iss` of its tokens) and the API's audience there.
      issuer: 'https://auth.example.com/',
      audience: ['commerce-api'],
    },
    alarmEmail: '<prod on-call address>',
    tags: { owner: '<team>', costCentre: '<cost centre>' },
  },
};
