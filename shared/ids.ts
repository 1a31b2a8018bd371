import { monotonicFactory, ulid as randomUlid } from 'ulid';

// 00-decisions §4: a prefix plus 26 characters of a random, time-ordered id (ULID).
// The monotonic factory keeps ids created in the same millisecond ordered; it does so by
// incrementing the previous id, so identifiers handed to the public (Integration and connection
// keys, tenant ids) take fresh randomness instead and cannot be derived from a neighbouring id.
const monotonicUlid = monotonicFactory();
const PUBLIC_PREFIXES = new Set<string>(['svc_int_', 'svc_conn_v1.', 'ten_']);

export type IdPrefix =
  | 'ws_'
  | 'acct_'
  | 'usr_'
  | 'env_'
  | 'wint_'
  | 'int_'
  | 'svc_int_'
  | 'svc_conn_v1.'
  | 'svc_ing_'
  | 'svc_api_'
  | 'cv_'
  | 'cop_'
  | 'act_'
  | 'rule_'
  | 'credop_'
  | 'intop_'
  | 'consetup_'
  | 'ruleop_'
  | 'concopy_'
  | 'concomp_'
  | 'cliop_'
  | 'inc_'
  | 'fnd_'
  | 'rp_'
  | 'rds_'
  | 'rrun_'
  | 'rval_'
  | 'rapr_'
  | 'del_'
  | 'ten_'
  | 'sess_'
  | 'key_'
  | 'cred_'
  | 'clic_';

export function newId(prefix: IdPrefix): string {
  return prefix + (PUBLIC_PREFIXES.has(prefix) ? randomUlid() : monotonicUlid()).toLowerCase();
}

/** True when `value` has the given prefix followed by exactly 26 id characters. */
export function hasIdForm(value: unknown, prefix: IdPrefix): value is string {
  return (
    typeof value === 'string'
    && value.length === prefix.length + 26
    && value.startsWith(prefix)
    && /^[0-9a-hjkmnp-tv-z]{26}$/.test(value.slice(prefix.length))
  );
}
