import { Agent, request } from 'node:http';

/**
 * A minimal client for DynamoDB's JSON protocol, for the local cloud's own
 * calls (creating tables, reading streams). Stream records come back in
 * exactly the wire shape Lambda delivers, so nothing is converted twice.
 */
export class DynamoJsonClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(private readonly port: number) {}

  call<T = Record<string, unknown>>(target: string, input: unknown): Promise<T> {
    const body = Buffer.from(JSON.stringify(input));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: 'POST',
          path: '/',
          agent: this.agent,
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'content-length': body.length,
            'x-amz-target': target,
            // DynamoDB Local reads the access key from the header and checks no signature.
            authorization: `AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0`,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const payload = text ? JSON.parse(text) : {};
            if (res.statusCode === 200) resolve(payload as T);
            else {
              const type = String(payload.__type ?? 'Error');
              reject(
                Object.assign(new Error(`${target}: ${payload.message ?? payload.Message ?? text}`), {
                  code: type.slice(type.indexOf('#') + 1),
                }),
              );
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}
