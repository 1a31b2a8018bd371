// What a command prints: the API's own JSON with --json (stable for scripts), a table sized to
// the terminal otherwise. Results go to stdout, progress and warnings to stderr only; NO_COLOR
// and a non-TTY stdout turn colour off.

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

export interface Output {
  json: boolean;
  color: boolean;
  /** Width of stdout's terminal; unbounded when it is not one (a pipe gets whole ids, never `…`). */
  columns: number;
  /** Prints a command's result: `value` as JSON with --json, else `human()` (a table or lines of text). */
  result(value: unknown, human: () => string): void;
  /** A line on stderr (never mixed into a result). */
  progress(message: string): void;
}

export function createOutput(json: boolean): Output {
  const tty = process.stdout.isTTY === true;
  const color = tty && process.env.NO_COLOR === undefined && process.env.TERM !== 'dumb';
  return {
    json,
    color,
    columns: tty && process.stdout.columns ? process.stdout.columns : Number.POSITIVE_INFINITY,
    result(value, human) {
      process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
    },
    progress(message) {
      process.stderr.write(`${message}\n`);
    },
  };
}

/**
 * Rows as a table of at most `width` columns: each column as wide as its widest cell, the widest
 * ones cut (with `…`) until the table fits. Headers are bold when `color` is on.
 */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], width: number, color: boolean): string {
  if (rows.length === 0) return 'Nothing to show.';
  const cells = rows.map((row) => columns.map((column) => oneLine(column.value(row))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i].length)));
  const gap = 2;
  while (widths.reduce((sum, w) => sum + w, 0) + gap * (widths.length - 1) > width) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest] <= 8) break;
    widths[widest]--;
  }
  const fit = (text: string, w: number) => (text.length > w ? `${text.slice(0, w - 1)}…` : text.padEnd(w));
  const header = columns.map((column, i) => fit(column.header, widths[i])).join(' '.repeat(gap));
  const lines = cells.map((line) =>
    line
      .map((cell, i) => fit(cell, widths[i]))
      .join(' '.repeat(gap))
      .trimEnd(),
  );
  return [color ? `\u001b[1m${header.trimEnd()}\u001b[22m` : header.trimEnd(), ...lines].join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}
