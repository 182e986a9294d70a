/**
 * A tiny HTML templating helper that escapes by default: every interpolated value is escaped
 * unless it is itself an `Html` value (made by `html` or, for already-sanitised markup, `raw`).
 */

const HTML_BRAND: unique symbol = Symbol("Html")

/** A fragment of markup that is safe to insert as is. */
export interface Html {
  readonly [HTML_BRAND]: true
  readonly value: string
}

const make = (value: string): Html => ({ [HTML_BRAND]: true, value })

/** Whether a value is an `Html` fragment. */
export const isHtml = (u: unknown): u is Html => typeof u === "object" && u !== null && HTML_BRAND in u

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" }

/** Escapes text for use in element content and quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c)

/** A value that may appear inside `html`: text, numbers, fragments, arrays of them, or nothing. */
export type Interpolation = Html | string | number | boolean | null | undefined | ReadonlyArray<Interpolation>

const render = (value: Interpolation): string => {
  if (value === null || value === undefined || value === false) return ""
  if (Array.isArray(value)) return value.map(render).join("")
  if (isHtml(value)) return value.value
  return escapeHtml(String(value))
}

/** The escaping template tag: html`<p>${userText}</p>`. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  let out = strings[0] ?? ""
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "")
  return make(out)
}

/** Marks markup as safe. Only for markup the core sanitiser produced or constants of this adapter. */
export const raw = (markup: string): Html => make(markup)

/** Joins fragments. */
export const join = (parts: ReadonlyArray<Interpolation>, separator: Interpolation = ""): Html =>
  make(parts.map(render).join(render(separator)))

/** The markup string of a fragment. */
export const toString = (fragment: Html): string => fragment.value
