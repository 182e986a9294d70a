import { createHash } from "node:crypto"
import { type Html, html, raw, toString } from "./html.ts"

/**
 * The stylesheet of the sandboxed article preview. It is inline in the `srcdoc` document (which
 * inherits the page's CSP), so the page's CSP allows exactly this text by its hash.
 */
export const PREVIEW_STYLE = [
  "body{font:16px/1.6 Georgia,'Times New Roman',serif;color:#1c2330;margin:0;padding:1rem 1.25rem;max-width:46rem}",
  "h1,h2,h3,h4{font-family:system-ui,sans-serif;line-height:1.3}",
  "img{max-width:100%;height:auto}",
  "a{color:#1d4ed8}",
  "table{border-collapse:collapse}td,th{border:1px solid #d9dee6;padding:.3rem .5rem}",
  "blockquote{border-left:4px solid #d9dee6;margin-left:0;padding-left:1rem;color:#4b5563}",
  "pre{background:#f1f3f6;padding:.75rem;overflow:auto}",
  // The outline sits outside the link: a margin as wide as its offset keeps the spaces around it visible.
  "[data-service-protected]{outline:2px dashed #7c3aed;outline-offset:2px;background:#f3edff;border-radius:3px;margin:0 4px}",
  // Its own dashed outline would hide the focus ring: the focused one gets a solid, wider ring in the
  // page's focus colour (5:1 on the white around it), inside the same margin.
  // The page cannot see the focus inside the frame (its :focus-within does not cross into it): the
  // frame's own document rings its edge while the keyboard's focus is in it.
  "html:has(:focus-visible)::after{content:'';position:fixed;inset:0;border:3px solid #b45309;border-radius:6px;pointer-events:none}",
  "[data-service-protected]:focus-visible{outline:3px solid #b45309;outline-offset:1px}",
  "[data-service-protected]::before{content:'PROTECTED';font:700 10px/1.7 system-ui,sans-serif;letter-spacing:.04em;color:#fff;background:#6d28d9;border-radius:3px;padding:0 4px;margin-right:4px;display:inline-block;text-decoration:none;vertical-align:1px}",
].join("")

/** The CSP source that allows the preview's inline stylesheet. */
export const PREVIEW_STYLE_HASH = `'sha256-${createHash("sha256").update(PREVIEW_STYLE).digest("base64")}'`

/**
 * The article body, already sanitised by the core, in a sandboxed frame (no scripts, no
 * same-origin access, no navigation of the page), with its protected blocks outlined and labelled.
 */
export const articlePreview = (sanitisedBody: string, title: string): Html => {
  const doc = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><style>${raw(PREVIEW_STYLE)}</style></head><body>${raw(sanitisedBody)}</body></html>`
  return html`<iframe class="article-preview" sandbox="" referrerpolicy="no-referrer" title="Article preview: ${title}" srcdoc="${toString(doc)}"></iframe>`
}
