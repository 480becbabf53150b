import type { Resource, Template } from '../../assembly';
import { templateChanges } from '../../reload';

/** What `npm start -- --watch` applies without a restart (a function's new bundle) and what it only reports. */
const fn = (hash: string, environment: Record<string, string> = { STAGE: 'dev' }): Resource => ({
  Type: 'AWS::Lambda::Function',
  Properties: {
    Code: { S3Bucket: 'assets', S3Key: `${hash}.zip` },
    Handler: 'index.handler',
    Environment: { Variables: environment },
  },
  Metadata: { 'aws:cdk:path': 'Commerce-dev/Fn/Resource', 'aws:asset:path': `asset.${hash}` },
});
const table: Resource = { Type: 'AWS::DynamoDB::Table', Properties: { BillingMode: 'PAY_PER_REQUEST' } };
const template = (resources: Record<string, Resource>): Template => ({ Resources: resources });

test('a function whose bundle alone changed is a code change, with its new asset path', () => {
  const changes = templateChanges(
    template({ Fn: fn('aaa'), Other: fn('bbb'), Table: table }),
    template({ Fn: fn('ccc'), Other: fn('bbb'), Table: table }),
  );
  expect([...changes.code]).toEqual([['Fn', 'asset.ccc']]);
  expect(changes.other).toEqual([]);
});

test('a changed environment, table, added or removed resource is reported, not taken as code', () => {
  const changes = templateChanges(
    template({ Fn: fn('aaa'), Gone: fn('bbb'), Table: table }),
    template({
      Fn: fn('ccc', { STAGE: 'dev', NEW: '1' }),
      Table: { ...table, Properties: { BillingMode: 'PROVISIONED' } },
      Added: table,
    }),
  );
  expect(changes.code.size).toBe(0);
  expect(changes.other).toEqual([
    'Fn (AWS::Lambda::Function) changed',
    'Table (AWS::DynamoDB::Table) changed',
    'Added (AWS::DynamoDB::Table) added',
    'Gone (AWS::Lambda::Function) removed',
  ]);
});

test('metadata, alarms and dashboards (nothing local reads them) are no change', () => {
  const metadata = (analytics: string): Resource => ({
    Type: 'AWS::CDK::Metadata',
    Properties: { Analytics: analytics },
  });
  const changes = templateChanges(
    template({ Fn: fn('aaa'), CDKMetadata: metadata('v2:deflate64:one') }),
    template({ Fn: fn('ccc'), CDKMetadata: metadata('v2:deflate64:two') }),
  );
  expect([...changes.code]).toEqual([['Fn', 'asset.ccc']]);
  expect(changes.other).toEqual([]);
});

test('the same template has no changes', () => {
  const same = template({ Fn: fn('aaa'), Table: table });
  expect(templateChanges(same, same)).toEqual({ code: new Map(), other: [] });
});
