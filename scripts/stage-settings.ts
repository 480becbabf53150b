/**
 * Prints a stage's settings from config/stages.ts, checked as synthesis checks
 * them (staging and prod refuse a placeholder or a missing value, naming each
 * setting), for a pipeline or a shell to read before it touches AWS:
 *
 *   npx tsx scripts/stage-settings.ts <stage>                   # key=value lines
 *   npx tsx scripts/stage-settings.ts <stage> >> "$GITHUB_OUTPUT"
 *
 * Keys: `stage`, `account` and `region` (empty on dev: those of your
 * credentials), `identity` (userPool | external), and for an external
 * identity with a load client `load_token_url`, `load_client_id` and
 * `load_client_secret_name` (a Secrets Manager name: the secret itself is
 * read by whoever runs the load, with their own rights).
 */
import { STAGE_SETTINGS } from '../config/stages';
import { STAGES } from '../lib/stage-config';
import { checkedSettings, type StageSettingsFile } from '../lib/stage-settings';

export function stageSettingsLines(stage: string, file: StageSettingsFile = STAGE_SETTINGS): string[] {
  if (!(STAGES as readonly string[]).includes(stage))
    throw new Error(`unknown stage "${stage}": use one of ${STAGES.join(', ')}`);
  const settings = checkedSettings(stage, file);
  const { identity } = settings;
  const values: Record<string, string> = {
    stage,
    account: settings.account ?? '',
    region: settings.region ?? '',
    identity: identity.kind,
    ...(identity.kind === 'external' && identity.loadClient
      ? {
          load_token_url: identity.loadClient.tokenUrl,
          load_client_id: identity.loadClient.clientId,
          load_client_secret_name: identity.loadClient.clientSecret.secretsManagerName,
        }
      : {}),
  };
  return Object.entries(values).map(([key, value]) => `${key}=${value}`);
}

if (require.main === module) {
  const [stage] = process.argv.slice(2);
  try {
    if (!stage) throw new Error(`usage: npx tsx scripts/stage-settings.ts <${STAGES.join('|')}>`);
    console.log(stageSettingsLines(stage).join('\n'));
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
