import { type App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag's AWS Solutions pack on the whole app: synthesis (and so `cdk
 * deploy`) fails on any finding not acknowledged where it arises.
 */
export function addNagChecks(app: App) {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

/**
 * Acknowledges one finding of the AWS Solutions pack on `scope` and what it
 * contains, e.g. `IAM5[Resource::*]`. The reason is part of the call, so it
 * sits on the line that acknowledges.
 */
export function acknowledgeNag(scope: IConstruct, finding: string, reason: string) {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${finding}`, reason });
}

/** The logical id of a construct's CloudFormation resource, as cdk-nag names it in a finding. */
export function logicalIdOf(construct: IConstruct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}
