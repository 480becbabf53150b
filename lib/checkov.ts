import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** One Checkov check acknowledged on a resource, as Checkov reads it from the template. */
interface CheckovSkip {
  readonly id: string;
  readonly comment: string;
}

/**
 * Acknowledges one Checkov finding (e.g. `CKV_AWS_117`) on `scope`'s
 * CloudFormation resource (the construct itself, or its default child), with
 * the reason on the line that acknowledges: Checkov reads
 * `Metadata.checkov.skip` and reports the check as skipped, comment included.
 * The infra tests fail on any finding not acknowledged so.
 */
export function acknowledgeCheckov(scope: IConstruct, id: string, comment: string) {
  const resource = scope instanceof CfnResource ? scope : scope.node.defaultChild;
  if (!(resource instanceof CfnResource)) {
    throw new Error(`${scope.node.path} has no CloudFormation resource to acknowledge ${id} on`);
  }
  const existing = (resource.getMetadata('checkov') as { skip?: CheckovSkip[] } | undefined)?.skip ?? [];
  resource.addMetadata('checkov', { skip: [...existing, { id, comment }] });
}

/** Why a log group has no customer-managed KMS key (CKV_AWS_158), wherever one is made. */
export const LOG_GROUP_KEY_REASON =
  'CloudWatch Logs encrypts every log group at rest with its own key; the logs hold ids and outcomes, no secrets, so a customer-managed KMS key would add a key per stage and its key policy for nothing';
