/**
 * The positional layout of a script's KEYS and ARGV, and its reply codes. Redis hands a script
 * its keys and arguments by position only; a layout is the one ordered list of their names, from
 * which both sides are generated, so that neither can drift from the other:
 *   - build() turns a typed object into the KEYS and ARGV arrays (a missing or extra name is a
 *     compile error);
 *   - preamble is the Lua that declares one local per name (`local nowMs = tonumber(ARGV[2])`)
 *     and one constant per reply code (`local REPLY_STALE_CREDENTIAL = 2`, the code's name in
 *     upper snake case), prepended to the script body, which refers to names only.
 * Both are made once, with the script: the preamble is part of its text, and build() is compiled
 * to straight-line code that only copies values.
 */

/**
 * How a value crosses: 'number' is a TypeScript number and a Lua number; 'numberText' a
 * TypeScript number that the Lua keeps as the text sent, for a number the script passes on (to a
 * Redis command, into a stored value) rather than computes with, which as a Lua number would be
 * formatted back to text on each use; 'string' a string on both sides; 'flag' a TypeScript
 * boolean sent as 1 or 0 and a Lua boolean; 'bytes' a Buffer sent as is (binary, which a
 * TypeScript string would be re-encoded as UTF-8) and a Lua string.
 */
export type Kind = 'number' | 'numberText' | 'string' | 'flag' | 'bytes';

export interface Field<N extends string = string, K extends Kind = Kind> {
  readonly slot: 'field';
  readonly name: N;
  readonly kind: K;
}

/**
 * A list of values. With a length, exactly that many. Without, as many as the call has: the last
 * slot of KEYS or ARGV takes the rest of the array, and one before other slots (ARGV only, a key
 * must be a key) is preceded by its count, which build() sends and the preamble reads.
 */
export interface List<N extends string = string, K extends Kind = Kind> {
  readonly slot: 'list';
  readonly name: N;
  readonly kind: K;
  readonly length?: number;
}

export type Slot = Field | List;
export type KeySlot = Field<string, 'string'> | List<string, 'string'>;

export const arg = {
  number: <N extends string>(name: N): Field<N, 'number'> => ({ slot: 'field', name, kind: 'number' }),
  numberText: <N extends string>(name: N): Field<N, 'numberText'> => ({ slot: 'field', name, kind: 'numberText' }),
  string: <N extends string>(name: N): Field<N, 'string'> => ({ slot: 'field', name, kind: 'string' }),
  flag: <N extends string>(name: N): Field<N, 'flag'> => ({ slot: 'field', name, kind: 'flag' }),
  bytes: <N extends string>(name: N): Field<N, 'bytes'> => ({ slot: 'field', name, kind: 'bytes' }),
  list: <N extends string, K extends Kind>(name: N, kind: K, length?: number): List<N, K> => ({ slot: 'list', name, kind, length }),
};

export const key = <N extends string>(name: N): Field<N, 'string'> => arg.string(name);
export const keyList = <N extends string>(name: N, length?: number): List<N, 'string'> => arg.list(name, 'string', length);

type ValueOf<K extends Kind> = K extends 'number' | 'numberText'
  ? number
  : K extends 'string'
    ? string
    : K extends 'bytes'
      ? Buffer
      : boolean;
type SlotInput<S extends Slot> =
  S extends Field<string, infer K> ? ValueOf<K> : S extends List<string, infer K> ? readonly ValueOf<K>[] : never;
/** The typed object of a list of slots: one property per name. */
export type LayoutInput<L extends readonly Slot[]> = { [S in L[number] as S['name']]: SlotInput<S> };

/** The typed object a layout builds a call from. */
export type ScriptInput<L> = L extends ScriptLayout<infer KS, infer AS> ? LayoutInput<KS> & LayoutInput<AS> : never;

export interface ScriptCall {
  keys: string[];
  args: (string | number | Buffer)[];
}

const LUA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LUA_RESERVED = new Set([
  'and',
  'break',
  'do',
  'else',
  'elseif',
  'end',
  'false',
  'for',
  'function',
  'if',
  'in',
  'local',
  'nil',
  'not',
  'or',
  'repeat',
  'return',
  'then',
  'true',
  'until',
  'while',
  'KEYS',
  'ARGV',
  'redis',
  'cjson',
  'unpack',
]);

/** A reply code's Lua constant: `staleCredential` → `REPLY_STALE_CREDENTIAL`. */
export const replyConstant = (name: string): string => `REPLY_${name.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;

/** A Lua index expression: a number plus terms (`14 + #windowLimits`). */
class Index {
  constructor(
    readonly at: number,
    readonly terms: readonly string[] = [],
  ) {}
  plus(n: number, term?: string): Index {
    return new Index(this.at + n, term === undefined ? this.terms : [...this.terms, term]);
  }
  toString(): string {
    return [...(this.at !== 0 || this.terms.length === 0 ? [String(this.at)] : []), ...this.terms].join(' + ');
  }
}

function luaValue(kind: Kind, expression: string): string {
  if (kind === 'number') return `tonumber(${expression})`;
  if (kind === 'flag') return `${expression} == '1'`;
  return expression;
}

/** The Lua that reads one array's slots into locals. */
function readSlots(array: 'KEYS' | 'ARGV', slots: readonly Slot[]): string[] {
  const lines: string[] = [];
  let at = new Index(1);
  slots.forEach((slot, position) => {
    const last = position === slots.length - 1;
    if (slot.slot === 'field') {
      lines.push(`local ${slot.name} = ${luaValue(slot.kind, `${array}[${at}]`)}`);
      at = at.plus(1);
    } else if (slot.length !== undefined) {
      const items = Array.from({ length: slot.length }, (_, index) => luaValue(slot.kind, `${array}[${at.plus(index)}]`));
      lines.push(`local ${slot.name} = {${items.join(', ')}}`);
      at = at.plus(slot.length);
    } else {
      // The rest of the array, or its count and then that many values: copied in one go (a table
      // filled one value at a time grows several times), then converted in place.
      const values = last ? `${at}` : `${at.plus(1)}, ${at.plus(0, `tonumber(${array}[${at}])`)}`;
      lines.push(`local ${slot.name} = {unpack(${array}, ${values})}`);
      if (slot.kind === 'number' || slot.kind === 'flag') {
        lines.push(`for i = 1, #${slot.name} do ${slot.name}[i] = ${luaValue(slot.kind, `${slot.name}[i]`)} end`);
      }
      if (!last) at = at.plus(1, `#${slot.name}`);
    }
  });
  return lines;
}

function checkSlots(array: 'KEYS' | 'ARGV', slots: readonly Slot[], names: Set<string>): void {
  slots.forEach((slot, position) => {
    if (!LUA_NAME.test(slot.name) || LUA_RESERVED.has(slot.name) || slot.name.startsWith('REPLY_'))
      throw new Error(`${array} name ${slot.name} cannot be a Lua local`);
    if (names.has(slot.name)) throw new Error(`${array} name ${slot.name} is used twice`);
    names.add(slot.name);
    const counted = slot.slot === 'list' && slot.length === undefined && position < slots.length - 1;
    if (array === 'KEYS' && counted) throw new Error(`KEYS ${slot.name}: only the last list of KEYS may have no length`);
  });
}

/**
 * The statements that push one array's values, in slot order, from `input` onto `out`: straight-line
 * code with a fixed property name at each read, as a hand-written builder would have.
 */
function pushSlots(out: string, slots: readonly Slot[]): string[] {
  return slots.map((slot, position) => {
    const send = (value: string) => (slot.kind === 'flag' ? `(${value} ? 1 : 0)` : value);
    if (slot.slot === 'field') return `${out}.push(${send(`input.${slot.name}`)});`;
    const check =
      slot.length !== undefined
        ? `if (v.length !== ${slot.length}) throw new Error('${slot.name} needs ${slot.length} values, not ' + v.length); `
        : position < slots.length - 1
          ? `${out}.push(v.length); `
          : '';
    return `{ const v = input.${slot.name}; ${check}for (let i = 0; i < v.length; i++) ${out}.push(${send('v[i]')}); }`;
  });
}

export class ScriptLayout<KS extends readonly KeySlot[], AS extends readonly Slot[]> {
  /** The Lua locals of every name and the reply constants, to go ahead of the script body. */
  readonly preamble: string;
  /** The KEYS and ARGV of one call. */
  readonly build: (input: LayoutInput<KS> & LayoutInput<AS>) => ScriptCall;

  constructor(
    readonly keys: KS,
    readonly args: AS,
    readonly replies: Readonly<Record<string, number>> = {},
  ) {
    const names = new Set<string>();
    checkSlots('KEYS', keys, names);
    checkSlots('ARGV', args, names);
    const codes = Object.entries(replies).map(([name, code]) => {
      if (!LUA_NAME.test(name) || !Number.isInteger(code)) throw new Error(`reply ${name} = ${code}`);
      return `local ${replyConstant(name)} = ${code}`;
    });
    this.preamble = [
      '-- KEYS, ARGV and replies by name (scriptLayout.ts)',
      ...readSlots('KEYS', keys),
      ...readSlots('ARGV', args),
      ...codes,
      '',
    ].join('\n');
    // Compiled once from the same slots; every name in it passed the identifier check above.
    const body = ['const keys = [];', ...pushSlots('keys', keys), 'const args = [];', ...pushSlots('args', args), 'return { keys, args };'];
    this.build = new Function('input', body.join('\n')) as (input: LayoutInput<KS> & LayoutInput<AS>) => ScriptCall;
  }
}
