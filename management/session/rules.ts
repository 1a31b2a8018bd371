import { AppError } from '../../shared/errors/index.js';

const CONTROL = /[\u0000-\u001f\u007f]/;
const EMAIL_PATTERN = /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

const length = (value: string) => [...value].length;

/** E-mail syntax: one `@`, no spaces or quotes, a dotted domain; at most 254 characters (64 local). */
export function validEmail(value: string): string {
  const email = value.trim();
  const local = email.split('@')[0] ?? '';
  if (email.length > 254 || local.length > 64 || CONTROL.test(email) || !EMAIL_PATTERN.test(email)) throw new AppError('invalid_signup');
  return email;
}

/** Passwords are 8 to 256 characters, taken exactly as sent (never trimmed). */
export function validPassword(value: string): string {
  if (length(value) < 8 || length(value) > 256) throw new AppError('invalid_signup');
  return value;
}

/** Display names are 1 to 120 characters after trimming, without control characters. */
export function validUserName(value: string): string {
  const name = value.trim();
  if (length(name) < 1 || length(name) > 120 || CONTROL.test(name)) throw new AppError('invalid_signup');
  return name;
}
