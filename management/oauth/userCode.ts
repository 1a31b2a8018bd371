import { randomInt } from 'node:crypto';

/**
 * RFC 8628 §6.1: consonants only (no vowels, so no words; no 0/O, 1/I to confuse), 8 of them:
 * 20^8 ≈ 2^34.6 codes, shown as `XXXX-XXXX`. Guessing is limited per user and per client address
 * (oauthThrottle.ts) and a code lives 10 minutes.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

const USER_CODE_FORM = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** A fresh user code, stored form (no dash), each character drawn uniformly. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** The form shown to people: `BCDF-GHJK`. */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, in stored form: case, dashes and white space do not matter
 * (`bcdf ghjk`, `BCDF-GHJK`). Null when it cannot be a code at all.
 */
export function normaliseUserCode(input: string): string | null {
  // ASCII letters only are upper-cased: 'ß'.toUpperCase() is 'SS', which would make a code.
  const code = input.replace(/[\s-]+/g, '').replace(/[a-z]/g, (letter) => letter.toUpperCase());
  return USER_CODE_FORM.test(code) ? code : null;
}
