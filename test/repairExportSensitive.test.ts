import { describe, expect, it } from 'vitest';
import { fingerprint } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { entropy, findSensitiveContent, type SensitiveKind } from '../shared/repairs/export/sensitive.js';
import { seededRandom } from './helpers/seededRandom.js';

// The patterns behind `repair_export_sensitive_content` (03 "Repair export bundle"): what an
// export file may not hold (e-mail addresses, credentials) and what it legitimately holds (field
// names, pointers, the service's own ids and fingerprints). Pure.

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(random: () => number, length: number, alphabet: string): string {
  let token = '';
  for (let index = 0; index < length; index++) token += alphabet[Math.floor(random() * alphabet.length)];
  return token;
}

describe('sensitive content of export files', () => {
  it.each<[SensitiveKind, string]>([
    ['email_address', 'jane.doe@example.com'],
    ['email_address', '"properties": {"ops+alerts@vendor.co.uk": {"type": "string"}}'],
    ['email_address', "$['components']['schemas']['Order']['properties']['x@corp.io']"],
    ['private_key', '-----BEGIN RSA PRIVATE KEY-----'],
    ['private_key', '-----BEGIN OPENSSH PRIVATE KEY-----'],
    ['known_key_prefix', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
    ['known_key_prefix', 'rk_test_51HxQ2eKq0Vb8Tz'],
    ['known_key_prefix', 'ghp_R4nd0mT0k3nV4lu3Th4tL00ksR34l0000'],
    ['known_key_prefix', 'github_pat_11ABCDEFG0123456789_abcdefghijkl'],
    ['known_key_prefix', 'xoxb-1234567890-abcdefgh'],
    ['known_key_prefix', 'AKIAIOSFODNN7EXAMPLE'],
    ['known_key_prefix', 'AIzaSyA1234567890abcdefghijklmnopqrstuv'],
    ['known_key_prefix', 'glpat-abcdefghij0123456789'],
    ['known_key_prefix', `${'svc_ing_'}${'A1b2C3d4E5f6G7h8J9k0'}`],
    ['json_web_token', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['authorization_header', 'Authorization: Bearer abcdefghijklmnop'],
    ['authorization_header', 'basic dXNlcjpwYXNzd29yZA=='],
    ['url_credentials', 'https://user:hunter2@api.vendor.test/v1'],
    ['uuid', '550e8400-e29b-41d4-a716-446655440000'],
    ['hex_token', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['random_token', 'Zk3q9XbT0wLm7RvY2cHd8NsPa5JeF1uG'],
  ])('%s: %s', (kind, text) => {
    expect(findSensitiveContent(text)?.kind).toBe(kind);
  });

  it.each([
    'account_holder_verification_document_2',
    'billingAddressLine2VerificationStatus',
    'x_amz_server_side_encryption_customer_algorithm',
    'ISO3166Alpha2CountryCodeV2',
    'isGetV1CustomersCustomerIdPaymentMethodsIdResponse200',
    'HTTPRequestHeaderXForwardedFor',
    '/properties/shipping/properties/addressLine2/items/properties/postalCode',
    "$['paths']['/v1/orders/{orderId}']['get']['responses']['200']['content']['application/vnd.vendor.v3+json']['schema']",
    '#/components/schemas/PaymentMethodDetailsCardPresentReceipt',
    '2026-11-29T10:00:00.000Z',
    'email',
    'user_email_address',
    'api_key',
    'See https://example.com/docs for the contract',
    '@scope/package and a decorator @Injectable',
  ])('not sensitive: %s', (text) => {
    expect(findSensitiveContent(text)).toBeNull();
  });

  it("the service's own ids and fingerprints are not taken for tokens; its secrets are", () => {
    const own = [newId('rp_'), newId('rds_'), newId('rrun_'), newId('rapr_'), newId('cv_'), newId('inc_'), newId('int_'), newId('cliop_')];
    expect(findSensitiveContent(`${own.join(' ')} ${fingerprint({ a: 1 })}`)).toBeNull();
    expect(findSensitiveContent(fingerprint({ a: 1 }).slice('sha256:'.length))?.kind).toBe('hex_token');
    // One character past an id's form, it is judged as any run: a fixed id, since about one random
    // id in seven has letter runs too long to pass for random (the heuristic's words rule).
    const id = 'rp_01jdq4k8m2x7c9v3b5n6p1z0w4';
    expect(findSensitiveContent(id)).toBeNull();
    expect(findSensitiveContent(`${id}x`)?.kind).toBe('random_token');
  });

  it('reports the first match', () => {
    const text = 'first jane@example.com then sk_live_4eC39HqLyjWDarjtT1zdp7dc';
    expect(findSensitiveContent(text)).toEqual({ kind: 'email_address', start: 6 });
    const reversed = 'first sk_live_4eC39HqLyjWDarjtT1zdp7dc then jane@example.com';
    expect(findSensitiveContent(reversed)).toEqual({ kind: 'known_key_prefix', start: 6 });
  });

  // One-case alphabets (base32, base36) are judged by entropy, which letters alone share with
  // words run together: such a token is recognised when it has a digit (all but 1 in 4,000 of
  // 40 random base32 characters), so the samples are drawn until they have one.
  it.each([
    ['base62', 48, BASE62],
    ['base64url', 48, `${BASE62}-_`],
    ['base36', 40, 'abcdefghijklmnopqrstuvwxyz0123456789'],
    ['base32', 40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'],
    ['hex', 40, '0123456789abcdef'],
  ])('random %s tokens of %i characters are refused', (_, length, alphabet) => {
    const random = seededRandom(29);
    for (let sample = 0; sample < 300; sample++) {
      let token = randomToken(random, length, alphabet);
      while (!/[0-9]/.test(token)) token = randomToken(random, length, alphabet);
      expect(findSensitiveContent(`"${token}": {"type": "string"}`), token).not.toBeNull();
    }
  });

  it('entropy is the Shannon entropy in bits per character', () => {
    expect(entropy('aaaa')).toBe(0);
    expect(entropy('abab')).toBe(1);
    expect(entropy('abcdefgh')).toBe(3);
  });
});
