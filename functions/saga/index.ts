// The saga module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
// Its Lambda entry points (handler.ts, sweeper.ts) are the CDK's to bundle, not another module's to import.
export { type SagaStatus, type SagaStep, sagaTrace } from './trace';
