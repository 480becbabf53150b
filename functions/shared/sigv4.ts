import { createHash, createHmac } from 'node:crypto';

/** The credentials a call is signed with (a Lambda function's: its role's, from the environment). */
export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** What Signature Version 4 signs of a JSON-protocol call: a POST to `/` with no query string. */
export interface JsonPost {
  readonly host: string;
  readonly region: string;
  readonly service: string;
  readonly target: string;
  readonly contentType: string;
  readonly body: string;
}

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/** The key of one day, region and service is the same for every call of that day: derived once. */
const signingKeys = new Map<string, Buffer>();

function signingKey(secretAccessKey: string, day: string, region: string, service: string): Buffer {
  const id = `${secretAccessKey}\n${day}\n${region}\n${service}`;
  let key = signingKeys.get(id);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
    signingKeys.clear(); // a new day or new credentials: the old keys are of no more use
    signingKeys.set(id, key);
  }
  return key;
}

/**
 * The headers of a JSON-protocol call signed with AWS Signature Version 4
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html):
 * the `Authorization` the AWS SDK's `SignatureV4` computes for the same
 * headers and body (test/unit/sigv4.test.ts holds the two equal). Only this
 * shape of request is signed, so the canonical request is written out
 * rather than built from a general request.
 */
export function signJsonPost(
  call: JsonPost,
  credentials: Credentials,
  now = new Date(),
): Record<string, string> {
  const amzDate = now.toISOString().replace(/[-:]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256Hex(call.body);
  const headers: Record<string, string> = {
    'content-type': call.contentType,
    host: call.host,
    'x-amz-content-sha256': payloadHash,
    'x-amz-date': amzDate,
    ...(credentials.sessionToken ? { 'x-amz-security-token': credentials.sessionToken } : {}),
    'x-amz-target': call.target,
  };
  // Sorted by name, as the canonical request lists them (the literal above is in that order).
  const names = Object.keys(headers);
  const canonicalRequest = [
    'POST',
    '/',
    '',
    ...names.map((name) => `${name}:${headers[name]!.trim()}`),
    '',
    names.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${day}/${call.region}/${call.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = createHmac(
    'sha256',
    signingKey(credentials.secretAccessKey, day, call.region, call.service),
  )
    .update(stringToSign, 'utf8')
    .digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
}
