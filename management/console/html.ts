/**
 * HTML for the console pages: every value placed in a page goes through `escapeHtml`, the one
 * escaping function (its tests: test/consolePages.test.ts), unless it is markup that `html` built.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text made safe for an element's content and for a quoted attribute value (either quote): the
 * five characters that can end a text run or an attribute become entities, and so does nothing
 * else. Unquoted attributes, URLs in `href`, and script or style content are not contexts it
 * covers, so the templates never place a value there unquoted or inside script or style.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ENTITIES[char]);
}

/** Markup built by `html` (or a constant of the templates): inserted into another template as it is. */
export class SafeHtml {
  constructor(readonly markup: string) {}

  toString(): string {
    return this.markup;
  }
}

/** What a template can interpolate: text (escaped), markup, a list of either, or nothing. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * The template tag of the pages: the literal parts are markup, every interpolated value is
 * escaped unless it is `SafeHtml` (a nested template), so a value can never open a tag.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let markup = strings[0];
  for (let i = 0; i < values.length; i++) markup += render(values[i]) + strings[i + 1];
  return new SafeHtml(markup);
}
