import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { AppError } from '../../shared/errors/index.js';
import { BoundedWork } from './boundedWork.js';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

/**
 * scrypt runs on libuv's thread pool (4 threads by default), which file, DNS and zlib work shares,
 * and each run holds 16 MiB (128·N·r): two at once per process leave that pool half free. A burst
 * past 32 waiting (about a second of work) is refused with 503 `service_unavailable` and
 * `Retry-After: 1` instead of queueing without bound (docs/decisions/accounts-and-workspaces.md).
 */
export const SCRYPT_CONCURRENCY = 2;
export const SCRYPT_QUEUE_LENGTH = 32;
export const SCRYPT_RETRY_AFTER_SECONDS = 1;
export const scryptWork = new BoundedWork(SCRYPT_CONCURRENCY, SCRYPT_QUEUE_LENGTH);

let scryptRuns = 0;

/** How many scrypt derivations this process has started: the same work for every login answer. */
export const scryptRunCount = (): number => scryptRuns;

function derive(password: string, salt: Buffer, keylen: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return scryptWork.run(
    () => {
      scryptRuns += 1;
      return scryptAsync(password, salt, keylen, { ...params, maxmem: PARAMS.maxmem });
    },
    () => new AppError('service_unavailable', { retryAfterSeconds: SCRYPT_RETRY_AFTER_SECONDS }),
  );
}

const encode = (params: { N: number; r: number; p: number }, salt: Buffer, hash: Buffer) =>
  ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join('$');

/** 00-decisions §3: scrypt from node:crypto. Stored as `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return encode(PARAMS, salt, await derive(password, salt, KEY_LENGTH, PARAMS));
}

/**
 * What a login checks when no user has the e-mail: the current parameters and key length with a
 * random salt and hash, so the check costs one scrypt run like a real one and matches nothing.
 * Made at load, not at the first unknown e-mail, so that first one costs no extra run either.
 */
export const NO_USER_PASSWORD_HASH = encode(PARAMS, randomBytes(16), randomBytes(KEY_LENGTH));

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}
