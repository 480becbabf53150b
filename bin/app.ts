import { App } from 'aws-cdk-lib';
import { CommerceStack } from '../lib/commerce-stack';
import { addNagChecks } from '../lib/nag';
import { type StageConfig, stageConfig } from '../lib/stage-config';

// The stage comes from `-c stage=...` (default dev); its settings from config/stages.ts; nothing else is
// read from the environment.
const app = new App();
let config: StageConfig;
try {
  config = stageConfig(String(app.node.tryGetContext('stage') ?? 'dev'), (key) =>
    app.node.tryGetContext(key),
  );
} catch (error) {
  // A setting to fix, not a fault of the app: the message alone says which, and where.
  console.error((error as Error).message);
  process.exit(1);
}
new CommerceStack(app, `Commerce-${config.stage}`, {
  config,
  description: `Serverless commerce platform (${config.stage})`,
});
// Synthesis, and so every deployment, fails on a cdk-nag finding that is not acknowledged where it arises.
addNagChecks(app);
app.synth();
