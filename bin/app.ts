import { App } from 'aws-cdk-lib';
import { CommerceStack } from '../lib/commerce-stack';
import { addNagChecks } from '../lib/nag';
import { stageConfig } from '../lib/stage-config';

// The stage comes from `-c stage=...` (default dev); nothing else is read from the environment.
const app = new App();
const config = stageConfig(String(app.node.tryGetContext('stage') ?? 'dev'), (key) =>
  app.node.tryGetContext(key),
);
new CommerceStack(app, `Commerce-${config.stage}`, {
  config,
  description: `Serverless commerce platform (${config.stage})`,
});
// Synthesis, and so every deployment, fails on a cdk-nag finding that is not acknowledged where it arises.
addNagChecks(app);
app.synth();
