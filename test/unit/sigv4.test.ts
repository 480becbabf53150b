import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { signJsonPost } from '../../functions/shared/sigv4';

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** The SHA-256 the SDK's signer is given in Node.js (its `@smithy/hash-node`, over node:crypto). */
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret ? createHmac('sha256', bytes(secret)) : createHash('sha256');
  }
  update(data: SourceData) {
    this.hash.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {}
}

const call = {
  host: 'dynamodb.eu-west-1.amazonaws.com',
  region: 'eu-west-1',
  service: 'dynamodb',
  target: 'DynamoDB_20120810.Query',
  contentType: 'application/x-amz-json-1.0',
  body: JSON.stringify({ TableName: 'Orders', KeyConditionExpression: '#id = :id', Limit: 1 }),
};

/** What the AWS SDK's own signer makes of the same call at the same moment. */
async function sdkSigned(
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  at: Date,
) {
  const signer = new SignatureV4({ credentials, region: call.region, service: call.service, sha256: Sha256 });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: call.host,
      path: '/',
      query: {},
      headers: { host: call.host, 'content-type': call.contentType, 'x-amz-target': call.target },
      body: call.body,
    },
    { signingDate: at },
  );
  return signed.headers;
}

describe('a DynamoDB call signed with Signature Version 4', () => {
  const at = new Date('2026-11-30T12:34:56.789Z');

  test('carries the Authorization the AWS SDK signs for it', async () => {
    const credentials = {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    };
    const ours = signJsonPost(call, credentials, at);
    const sdk = await sdkSigned(credentials, at);
    expect(ours.authorization).toBe(sdk.authorization);
    expect(ours['x-amz-date']).toBe('20261130T123456Z');
  });

  test('with a session token, signs it and sends it, as the SDK does', async () => {
    const credentials = {
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'token/with+chars==',
    };
    const ours = signJsonPost(call, credentials, at);
    const sdk = await sdkSigned(credentials, at);
    expect(ours.authorization).toBe(sdk.authorization);
    expect(ours['x-amz-security-token']).toBe(credentials.sessionToken);
  });

  test('signs each body and day apart (the derived key is kept per day)', () => {
    const credentials = { accessKeyId: 'AKID', secretAccessKey: 'secret' };
    const first = signJsonPost(call, credentials, at).authorization;
    expect(signJsonPost({ ...call, body: '{}' }, credentials, at).authorization).not.toBe(first);
    expect(signJsonPost(call, credentials, new Date('2026-12-01T00:00:01Z')).authorization).not.toBe(first);
    expect(signJsonPost(call, credentials, at).authorization).toBe(first);
  });
});
