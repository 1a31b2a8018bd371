/**
 * The one function that places a value into ClickHouse SQL text. ClickHouse 18.16 has no
 * query parameters (00-decisions §1), so strings are quoted with every special byte escaped
 * and numbers are checked to be finite.
 */
export function sqlLiteral(value: string | number | bigint | boolean | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('non-finite number in SQL');
    return String(value);
  }
  let out = "'";
  for (const ch of value) {
    switch (ch) {
      case '\\':
        out += '\\\\';
        break;
      case "'":
        out += "\\'";
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\0':
        out += '\\0';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      default:
        out += ch;
    }
  }
  return `${out}'`;
}

/** A ClickHouse identifier (database or table name): only plain names are allowed. */
export function sqlIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) throw new TypeError(`unsafe identifier: ${name}`);
  return `\`${name}\``;
}
