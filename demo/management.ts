// The management API calls the demo makes, with a workspace API key (the same routes a user
// would call with curl).

import { randomBytes } from 'node:crypto';

export class ManagementClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown, idempotent = false): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotent) headers['idempotency-key'] = `demo-${randomBytes(8).toString('hex')}`;
    const response = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  }

  /** The call, or an error naming the route and the answer. */
  async expect<T>(status: number, method: string, path: string, body?: unknown, idempotent = false): Promise<T> {
    const answer = await this.call<T>(method, path, body, idempotent);
    if (answer.status !== status) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  }
}
