import type { Schema } from "hast-util-sanitize"

/**
 * The article-HTML policy as data. Everything here is an allow list: an element, attribute or
 * URL scheme that is not named is removed (fail closed). `hast-util-sanitize` applies it; the
 * audit and the serialiser of this folder read the same tables.
 */

/** Inputs nested deeper than this many elements are refused. */
export const MAX_NESTING_DEPTH = 256

/** Any of U+0000-U+0020 and U+007F: removed before a URL's scheme is judged. */
const C = "[\\u0000-\\u0020\\u007f]"

/**
 * A URL attribute value is kept when, after removing ASCII whitespace and control characters
 * anywhere in it, it either starts with `http:`, `https:`, `mailto:` or `tel:` (any case) or
 * does not start with a scheme at all (a relative URL). The value itself is never rewritten.
 */
export const SAFE_URL = new RegExp(
  `^(?:${C}*(?:h${C}*t${C}*t${C}*p(?:${C}*s)?|m${C}*a${C}*i${C}*l${C}*t${C}*o|t${C}*e${C}*l)${C}*:` +
    `|(?!${C}*[a-z][\\u0000-\\u0020\\u007fa-z0-9+.\\-]*:))`,
  "i",
)

/** The schemes a URL attribute may use, for documentation and tests (enforced by `SAFE_URL`). */
export const ALLOWED_URL_SCHEMES: ReadonlyArray<string> = ["http", "https", "mailto", "tel"]

/**
 * Every attribute the policy can keep, as `[HTML attribute name, hast property name]`. The hast
 * names are what `hast-util-from-html` produces (a test pins each pair).
 */
export const ATTRIBUTE_NAMES: ReadonlyArray<readonly [string, string]> = [
  ["class", "className"],
  ["id", "id"],
  ["lang", "lang"],
  ["dir", "dir"],
  ["title", "title"],
  ["role", "role"],
  ["data-service-protected", "dataServiceProtected"],
  ["aria-label", "ariaLabel"],
  ["aria-labelledby", "ariaLabelledBy"],
  ["aria-describedby", "ariaDescribedBy"],
  ["aria-details", "ariaDetails"],
  ["aria-hidden", "ariaHidden"],
  ["aria-level", "ariaLevel"],
  ["aria-current", "ariaCurrent"],
  ["aria-roledescription", "ariaRoleDescription"],
  ["aria-controls", "ariaControls"],
  ["aria-expanded", "ariaExpanded"],
  ["href", "href"],
  ["rel", "rel"],
  ["target", "target"],
  ["hreflang", "hrefLang"],
  ["src", "src"],
  ["alt", "alt"],
  ["width", "width"],
  ["height", "height"],
  ["loading", "loading"],
  ["colspan", "colSpan"],
  ["rowspan", "rowSpan"],
  ["scope", "scope"],
  ["cite", "cite"],
  ["datetime", "dateTime"],
  ["open", "open"],
  ["start", "start"],
  ["reversed", "reversed"],
  ["value", "value"],
]

const globalAttributes = [
  "className",
  "id",
  "lang",
  "dir",
  "title",
  "role",
  "dataServiceProtected",
  "ariaLabel",
  "ariaLabelledBy",
  "ariaDescribedBy",
  "ariaDetails",
  "ariaHidden",
  "ariaLevel",
  "ariaCurrent",
  "ariaRoleDescription",
  "ariaControls",
  "ariaExpanded",
]

const citeUrl: [string, RegExp] = ["cite", SAFE_URL]

/**
 * The sanitiser schema for article bodies.
 *
 * - Kept: headings, paragraphs, lists, links, images, tables, quotes, code, figures, inline
 *   phrasing and sectioning elements, with the attributes above.
 * - Unwrapped (element removed, content kept): any other element, e.g. `font`, `label`,
 *   `video`, or a table part outside a table; a block-level one (`nav`, `center`, ...) is first
 *   turned into its allowed equivalent (`BLOCK_EQUIVALENTS`), so its text stays a block.
 * - Dropped with their content (`strip`): elements whose content is code, raw text, form
 *   controls or foreign markup, so `script`/`style` text never becomes article text.
 * - `id` and `name`-like attributes are not prefixed (`clobber: []`): article HTML must
 *   round-trip unchanged and in-page anchors must keep working. `name` itself is not allowed
 *   (it is what clobbers `document.x`); an `id` can still shadow a `window` global, which page
 *   scripts that render articles must not rely on.
 * - Only `data-service-protected` among `data-*`: other data attributes drive script gadgets.
 * - Comments and doctypes are dropped.
 */
export const articleSchema: Schema = {
  allowComments: false,
  allowDoctypes: false,
  clobber: [],
  clobberPrefix: "",
  // URL attributes are judged by `SAFE_URL` in `attributes`: hast-util-sanitize's own protocol
  // check is case-sensitive and does not trim, which would drop `HTTPS://x`.
  protocols: {},
  required: {},
  ancestors: {
    caption: ["table"],
    tbody: ["table"],
    thead: ["table"],
    tfoot: ["table"],
    tr: ["table"],
    th: ["table"],
    td: ["table"],
  },
  tagNames: [
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr",
    "ul", "ol", "li", "dl", "dt", "dd",
    "a", "img",
    "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td",
    "blockquote", "code", "pre", "kbd", "samp", "figure", "figcaption",
    "em", "strong", "b", "i", "u", "s", "sub", "sup", "mark", "small", "abbr", "cite", "q",
    "span", "div", "section", "article", "aside", "header", "footer",
    "details", "summary", "time", "del", "ins",
  ],
  attributes: {
    "*": globalAttributes,
    a: [["href", SAFE_URL], "rel", "target", "hrefLang"],
    img: [["src", SAFE_URL], "alt", "width", "height", "loading"],
    th: ["colSpan", "rowSpan", "scope"],
    td: ["colSpan", "rowSpan"],
    blockquote: [citeUrl],
    q: [citeUrl],
    del: [citeUrl, "dateTime"],
    ins: [citeUrl, "dateTime"],
    time: ["dateTime"],
    details: ["open"],
    ol: ["start", "reversed"],
    li: ["value"],
  },
  strip: [
    "script", "style", "template", "noscript", "noembed", "noframes", "xmp", "plaintext",
    "iframe", "frame", "frameset", "object", "embed", "applet", "param",
    "svg", "math",
    "form", "button", "select", "option", "optgroup", "datalist", "textarea", "input",
    "head", "title", "base", "meta", "link",
  ],
}

/**
 * Block-level elements the schema does not allow (those the HTML standard renders as blocks and
 * that are not dropped with their content), each with the allowed element that stands in for it.
 * Unwrapped in place, their text would run into the text beside it (`<nav>Home</nav><nav>About</nav>`
 * read `HomeAbout`); as their equivalent it stays a block of its own. The sanitiser still reports
 * the original tag as removed, and keeps on the equivalent only the attributes the schema allows
 * it, never `data-service-protected` (a disallowed element never was a protected block).
 */
export const BLOCK_EQUIVALENTS: Readonly<Record<string, string>> = {
  address: "div",
  center: "div",
  dialog: "div",
  fieldset: "div",
  hgroup: "div",
  legend: "div",
  main: "div",
  nav: "div",
  search: "div",
  dir: "ul",
  menu: "ul",
  listing: "pre",
}
