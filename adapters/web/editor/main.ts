/**
 * The article page's visual editor (progressive enhancement: without this script the page edits
 * the body as HTML in the textarea). It replaces the textarea with a ProseMirror editor when the
 * body can be shown without changing it, else opens the HTML source and says why; keeps the
 * textarea filled with the body's HTML for the form; locks protected links; and, before saving,
 * shows what the server's dry run says (what sanitising removes, the protected-links verdict).
 */
import { toggleMark } from "prosemirror-commands"
import { closeHistory, redo as redoStep, undo as undoStep, history } from "prosemirror-history"
import { keymap } from "prosemirror-keymap"
import type { Node as PMNode } from "prosemirror-model"
import { dropCursor } from "prosemirror-dropcursor"
import { gapCursor } from "prosemirror-gapcursor"
import { EditorState, type Command } from "prosemirror-state"
import { EditorView, type NodeView } from "prosemirror-view"
import { blockTypeAt, inList, inQuote, insertImage, keys, linkAt, markActive, setBlock, setLink, toggleEmphasis, toggleList, toggleQuote, unsetLink } from "./commands.ts"
import { toHtml, tryLoad, withoutStylesAndHandlers } from "./html.ts"
import { protectedLock, type Refusal } from "./protect.ts"
import { htmlAttr, type HtmlAttrs, protectedElement, schema, VIEW_ONLY_DROP } from "./schema.ts"

const h = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) el.setAttribute(k, v)
  el.append(...children)
  return el
}

/** The protected element as shown in the editor: locked, labelled, draggable. */
class ProtectedView implements NodeView {
  readonly dom: HTMLElement
  constructor(node: PMNode, inline: boolean) {
    this.dom = h(inline ? "span" : "div", {
      class: inline ? "pm-protected" : "pm-protected pm-protected-block",
      contenteditable: "false",
      draggable: "true",
      title: "Protected link: it can be moved (drag, or cut and paste), not edited or deleted",
    })
    const badge = h("span", { class: "pm-lock" }, "Protected")
    const el = document.importNode(protectedElement(node.attrs["html"] as string), true)
    for (const e of [el, ...Array.from(el.querySelectorAll("*"))]) for (const a of Array.from(e.attributes)) if (VIEW_ONLY_DROP.test(a.name)) e.removeAttribute(a.name)
    // The editor is one Tab stop, as a textarea is: the link inside is not a stop of its own.
    for (const e of [el, ...Array.from(el.querySelectorAll("*"))]) if (e.matches("a[href], area[href], [tabindex]")) e.setAttribute("tabindex", "-1")
    this.dom.append(badge, el)
  }
  /**
   * Keys pressed while the link inside has the focus (a click puts it there) are not the text's:
   * ProseMirror would apply them at its own selection, out of sight (Enter split the article's
   * first block). Drags and clicks still go to the editor, which moves and selects the element.
   */
  stopEvent(event: Event): boolean {
    return (event.type.startsWith("key") || event.type === "beforeinput") && event.target !== this.dom && this.dom.contains(event.target as Node)
  }
  ignoreMutation(): boolean {
    return true
  }
}

/**
 * Undo and redo replay only what the lock let through, and the HTML source's edits, which the
 * person may make there (the server checks protected links on saving): undoing a source edit that
 * removed a protected link brings it back, which the lock alone would refuse as a copy.
 */
const unlocked = (command: Command): Command => (state, dispatch, view) =>
  command(state, dispatch && ((tr) => dispatch(tr.setMeta("protected-lock-own", true))), view)
const undo = unlocked(undoStep)
const redo = unlocked(redoStep)

interface Parts {
  readonly form: HTMLFormElement
  readonly textarea: HTMLTextAreaElement
  readonly previewUrl: string
}

const mount = ({ form, textarea, previewUrl }: Parts): void => {
  const label = document.querySelector<HTMLLabelElement>('label[for="body"]')
  const hint = document.getElementById("body-hint")
  const wrapper = h("div", { class: "editor", id: "body-editor" })
  const visualButton = h("button", { type: "button", class: "editor-mode", "aria-pressed": "true" }, "Visual")
  const sourceButton = h("button", { type: "button", class: "editor-mode", "aria-pressed": "false" }, "HTML source")
  const modes = h("div", { class: "editor-modes", role: "group", "aria-label": "Editing mode" }, visualButton, sourceButton)
  const notice = h("div", { class: "editor-notice", role: "status", id: "editor-notice" })
  const toolbar = h("div", { class: "editor-toolbar", role: "toolbar", "aria-label": "Formatting", "aria-controls": "body-visual" })
  // The headings typed in the body are the article's, not the page's: a labelled region groups them,
  // so a screen reader moving by headings hears that it entered the body before the first one.
  const surface = h("div", { class: "editor-surface", role: "region", "aria-label": "Article body (visual editor)" })
  const lockMessage = h("div", { class: "lock-message", role: "alert", id: "lock-message", hidden: "" })
  surface.append(lockMessage)
  wrapper.append(modes, notice, toolbar, surface)
  textarea.before(wrapper)
  wrapper.after(textarea)

  // ---- toolbar ---------------------------------------------------------------------------------
  const blockSelect = h(
    "select",
    { "aria-label": "Text style", class: "editor-block" },
    h("option", { value: "p" }, "Paragraph"),
    h("option", { value: "h2" }, "Heading 2"),
    h("option", { value: "h3" }, "Heading 3"),
    h("option", { value: "h4" }, "Heading 4"),
    h("option", { value: "pre" }, "Code block"),
    h("option", { value: "other", disabled: "" }, "Other"),
  )
  const buttons: Array<{ el: HTMLButtonElement; active?: (s: EditorState) => boolean; run: Command | null }> = []
  /** A toolbar button; `run` is also asked (without dispatch) whether it applies, unless it opens a form. */
  const button = (text: string | readonly [symbol: string, words: string], title: string, run: Command, active?: (s: EditorState) => boolean, cls = "", opensForm = false): HTMLButtonElement => {
    // Symbol buttons (B, I, ↶) are named by their title; word buttons by their own words, a symbol
    // before them (• Bulleted list) hidden from the name.
    const el =
      typeof text === "string"
        ? h("button", text.length <= 3 ? { type: "button", class: `tool ${cls}`, title, "aria-label": title } : { type: "button", class: `tool ${cls}`, title }, text)
        : h("button", { type: "button", class: `tool ${cls}`, title }, h("span", { "aria-hidden": "true" }, text[0]), ` ${text[1]}`)
    if (active) el.setAttribute("aria-pressed", "false")
    el.addEventListener("mousedown", (e) => e.preventDefault())
    el.addEventListener("click", () => {
      if (opensForm) opener = el
      run(view.state, view.dispatch)
      // A box it opens keeps the focus in its field.
      if (!opensForm) view.focus()
    })
    buttons.push(active ? { el, active, run: opensForm ? null : run } : { el, run: opensForm ? null : run })
    return el
  }
  const m = schema.marks
  /** The toolbar button that opened the link or image box: cancelling the box goes back to it. */
  let opener: HTMLElement | null = null
  const linkForm = h("div", { class: "editor-popover", hidden: "" })
  const linkInput = h("input", { type: "text", id: "editor-link-href", inputmode: "url", placeholder: "https://…" })
  const linkApply = h("button", { type: "button", class: "button button-small" }, "Apply link")
  const linkCancel = h("button", { type: "button", class: "button button-quiet button-small" }, "Cancel")
  linkForm.append(h("label", { for: "editor-link-href" }, "Link address"), linkInput, linkApply, linkCancel)
  const imageForm = h("div", { class: "editor-popover", hidden: "" })
  const imageSrc = h("input", { type: "text", id: "editor-image-src", inputmode: "url", placeholder: "https://…" })
  const imageAlt = h("input", { type: "text", id: "editor-image-alt" })
  const imageApply = h("button", { type: "button", class: "button button-small" }, "Insert image")
  const imageCancel = h("button", { type: "button", class: "button button-quiet button-small" }, "Cancel")
  imageForm.append(h("label", { for: "editor-image-src" }, "Image address"), imageSrc, h("label", { for: "editor-image-alt" }, "Description (alt text)"), imageAlt, imageApply, imageCancel)

  const openPopover = (form: HTMLElement, focus: HTMLInputElement, value: string) => {
    linkForm.hidden = true
    imageForm.hidden = true
    form.hidden = false
    focus.value = value
    focus.focus()
  }
  toolbar.append(
    blockSelect,
    button("B", "Bold", toggleEmphasis(m["strong"]!, m["b"]!), (s) => markActive(s, [m["strong"]!, m["b"]!]), "tool-bold"),
    button("I", "Italic", toggleEmphasis(m["em"]!, m["i"]!), (s) => markActive(s, [m["em"]!, m["i"]!]), "tool-italic"),
    button("</>", "Inline code", toggleMark(m["code"]!), (s) => markActive(s, [m["code"]!])),
    // Toggles, so they say whether they are on (in a list or quote, pressing lifts out of it).
    button(["•", "Bulleted list"], "Bulleted list", toggleList("ul"), (s) => inList(s, "ul")),
    button(["1.", "Numbered list"], "Numbered list", toggleList("ol"), (s) => inList(s, "ol")),
    button(["❝", "Quote"], "Quote", toggleQuote, inQuote),
    button("Link", "Link", (s) => {
      const link = linkAt(s)
      openPopover(linkForm, linkInput, link ? (htmlAttr(link.attrs["html"] as HtmlAttrs, "href") ?? "") : "")
      return true
    }, undefined, "", true),
    button("Remove link", "Remove link", unsetLink),
    button("Image", "Insert image", () => {
      openPopover(imageForm, imageSrc, "")
      imageAlt.value = ""
      return true
    }, undefined, "", true),
    button("↶", "Undo", undo),
    button("↷", "Redo", redo),
  )
  toolbar.after(linkForm, imageForm)

  // The toolbar is one Tab stop (WAI-ARIA toolbar pattern): a roving tabindex on its controls, the
  // arrow keys, Home and End move between the enabled ones, and the last one focused is where Tab
  // comes back to (the first control while that one is disabled).
  const controls: ReadonlyArray<HTMLButtonElement | HTMLSelectElement> = [blockSelect, ...buttons.map((b) => b.el)]
  let tabStop: HTMLButtonElement | HTMLSelectElement = blockSelect
  const syncTabStop = () => {
    const stop = tabStop.disabled ? (controls.find((c) => !c.disabled) ?? blockSelect) : tabStop
    for (const c of controls) c.tabIndex = c === stop ? 0 : -1
  }
  toolbar.addEventListener("focusin", (e) => {
    const c = controls.find((c) => c === e.target)
    if (c === undefined) return
    tabStop = c
    syncTabStop()
  })
  toolbar.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || !["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return
    const enabled = controls.filter((c) => !c.disabled)
    const at = enabled.findIndex((c) => c === e.target)
    if (at < 0 || enabled.length === 0) return
    // Also the select's own use of these keys (choosing another style) is not wanted here.
    e.preventDefault()
    const to = e.key === "Home" ? 0 : e.key === "End" ? enabled.length - 1 : (at + (e.key === "ArrowRight" ? 1 : -1) + enabled.length) % enabled.length
    enabled[to]!.focus()
  })

  /** Closes the boxes: applied, back to the text; cancelled, back to the button that opened the box. */
  const closePopovers = (cancelled = false) => {
    linkForm.hidden = true
    imageForm.hidden = true
    if (cancelled && opener !== null && !toolbar.hidden) opener.focus()
    else view.focus()
  }
  const cancelPopovers = () => closePopovers(true)
  // In either box, Enter in a field applies it and Escape anywhere in it cancels it.
  for (const [box, apply, fields] of [[linkForm, linkApply, [linkInput]], [imageForm, imageApply, [imageSrc, imageAlt]]] as const) {
    box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault()
        cancelPopovers()
      } else if (e.key === "Enter" && (fields as ReadonlyArray<EventTarget>).includes(e.target!)) {
        e.preventDefault()
        apply.click()
      }
    })
  }
  linkApply.addEventListener("click", () => {
    const href = linkInput.value.trim()
    if (href !== "") setLink(href)(view.state, view.dispatch)
    closePopovers()
  })
  linkCancel.addEventListener("click", cancelPopovers)
  imageApply.addEventListener("click", () => {
    const src = imageSrc.value.trim()
    if (src !== "") insertImage(src, imageAlt.value.trim())(view.state, view.dispatch)
    closePopovers()
  })
  imageCancel.addEventListener("click", cancelPopovers)
  blockSelect.addEventListener("change", () => {
    setBlock(blockSelect.value)(view.state, view.dispatch)
    view.focus()
  })

  // ---- the lock's messages ---------------------------------------------------------------------
  let lockTimer: ReturnType<typeof setTimeout> | undefined
  const showRefusal = (v: EditorView, refusal: Refusal) => {
    lockMessage.textContent = refusal.message
    lockMessage.hidden = false
    const pos = Math.min(refusal.pos, v.state.doc.content.size)
    const at = v.coordsAtPos(pos)
    const box = surface.getBoundingClientRect()
    lockMessage.style.top = `${Math.max(0, at.bottom - box.top + 6)}px`
    lockMessage.style.left = `${Math.max(0, Math.min(at.left - box.left, box.width - 320))}px`
    const dom = v.nodeDOM(pos)
    if (dom instanceof HTMLElement && dom.classList.contains("pm-protected")) {
      dom.classList.remove("pm-refused")
      void dom.offsetWidth
      dom.classList.add("pm-refused")
    }
    clearTimeout(lockTimer)
    lockTimer = setTimeout(() => {
      lockMessage.hidden = true
    }, 8000)
  }

  // ---- the editor ------------------------------------------------------------------------------
  const plugins = [protectedLock(showRefusal), history(), keymap({ "Mod-z": undo, "Mod-y": redo, "Shift-Mod-z": redo }), keymap(keys), dropCursor(), gapCursor()]
  const stateOf = (doc: PMNode) => EditorState.create({ schema, doc, plugins })
  let view: EditorView
  const initial = tryLoad(textarea.value)
  const syncToolbar = (state: EditorState) => {
    for (const b of buttons) {
      if (b.active) b.el.setAttribute("aria-pressed", String(b.active(state)))
      b.el.disabled = !b.active && b.run !== null && !b.run(state)
    }
    const type = blockTypeAt(state)
    blockSelect.value = ["p", "h2", "h3", "h4", "pre"].includes(type) ? type : "other"
    syncTabStop()
  }
  view = new EditorView(surface, {
    state: stateOf("doc" in initial ? initial.doc : schema.topNodeType.createAndFill()!),
    attributes: {
      id: "body-visual",
      role: "textbox",
      "aria-multiline": "true",
      "aria-label": "Article body",
      // The textarea's description and state (a refused save: its message, aria-invalid) carry over.
      "aria-describedby": textarea.getAttribute("aria-describedby") ?? "body-hint",
      ...(textarea.getAttribute("aria-invalid") === "true" ? { "aria-invalid": "true" } : {}),
      class: "editor-content",
    },
    // Before the lock's own look at it (direct props run before plugins').
    transformPastedHTML: (html) => withoutStylesAndHandlers(html),
    nodeViews: {
      protected_inline: (node) => new ProtectedView(node, true),
      protected_block: (node) => new ProtectedView(node, false),
    },
    dispatchTransaction: (tr) => {
      const previous = view.state.doc
      const state = view.state.apply(tr)
      view.updateState(state)
      if (tr.docChanged) {
        if (!tr.getMeta("protected-lock-own")) lockMessage.hidden = true
        textarea.value = toHtml(state.doc)
        invalidatePreview()
        // The page's unsaved-changes prompt (app.js) listens for input events, which Enter, a paste, a
        // drop, the toolbar and the shortcuts do not fire (ProseMirror makes those changes itself).
        if (state.doc !== previous) textarea.dispatchEvent(new Event("input", { bubbles: true }))
      }
      syncToolbar(state)
    },
  })
  surface.append(lockMessage)
  syncToolbar(view.state)

  // The mode goes with the form, so a page that comes back after a refused save opens as it was left.
  const modeField = form.querySelector<HTMLInputElement>('input[name="mode"]') ?? h("input", { type: "hidden", name: "mode" }) as HTMLInputElement
  if (modeField.parentElement === null) form.append(modeField)
  const setMode = (visual: boolean) => {
    modeField.value = visual ? "visual" : "source"
    visualButton.setAttribute("aria-pressed", String(visual))
    sourceButton.setAttribute("aria-pressed", String(!visual))
    toolbar.hidden = !visual
    surface.hidden = !visual
    textarea.hidden = visual
    linkForm.hidden = true
    imageForm.hidden = true
    if (label) label.textContent = visual ? "Body" : "Body (HTML)"
    if (hint) {
      hint.textContent = visual
        ? "Protected links (marked Protected) can be moved, by dragging or by cut and paste, but not edited or deleted."
        : "Scripts, frames, styles and event handlers are removed when you save. Keep every element with data-service-protected exactly as it is."
    }
  }
  visualButton.addEventListener("click", () => {
    if (visualButton.getAttribute("aria-pressed") === "true") return
    const loaded = tryLoad(textarea.value)
    if ("reason" in loaded) {
      notice.className = "editor-notice notice notice-info"
      notice.textContent = `This HTML stays in source mode: ${loaded.reason}, so the visual editor could lose something. Your HTML is kept exactly as it is.`
      return
    }
    // The source's edits come in as one step of the same state, so the undo history (and the lock's
    // list of cut links) goes on across the switch: Ctrl+Z takes back the source's edits, then earlier ones.
    const current = view.state.doc
    const start = current.content.findDiffStart(loaded.doc.content)
    if (start !== null) {
      let { a: endA, b: endB } = current.content.findDiffEnd(loaded.doc.content)!
      const overlap = start - Math.min(endA, endB)
      if (overlap > 0) {
        endA += overlap
        endB += overlap
      }
      // A replace fits its slice into the document, which can add nodes (a table cell): the changed
      // range is kept only when it gives exactly the source's document, else the whole body is replaced,
      // else (never seen) the editor starts again from the source without history.
      const patched = view.state.tr.replace(start, endA, loaded.doc.slice(start, endB))
      const whole = () => view.state.tr.replaceWith(0, current.content.size, loaded.doc.content)
      const tr = patched.doc.eq(loaded.doc) ? patched : whole()
      // What the source changed is the person's to change there (the server checks protected links on saving).
      // An undo step of its own: not grouped with the typing just before the switch.
      if (tr.doc.eq(loaded.doc)) view.dispatch(closeHistory(tr).setMeta("protected-lock-own", true))
      else view.updateState(stateOf(loaded.doc))
    }
    // Nor with the typing just after it.
    view.dispatch(closeHistory(view.state.tr))
    syncToolbar(view.state)
    notice.textContent = ""
    notice.className = "editor-notice"
    setMode(true)
    view.focus()
  })
  sourceButton.addEventListener("click", () => {
    if (sourceButton.getAttribute("aria-pressed") === "true") return
    textarea.value = toHtml(view.state.doc)
    setMode(false)
    textarea.focus()
  })
  textarea.addEventListener("input", () => invalidatePreview())
  // "Copy" beside a refused save's protected links copies their HTML, which only the HTML source
  // takes as a link (the visual editor would paste it as text): it opens the source to paste into.
  document.addEventListener("click", (event) => {
    const button = (event.target as Element | null)?.closest?.("[data-copy^='keep-']")
    if (!button || visualButton.getAttribute("aria-pressed") !== "true") return
    sourceButton.click()
    notice.className = "editor-notice notice notice-info"
    notice.textContent = "The link's HTML is copied, and the HTML source is open: paste it where the link belongs (the visual editor would paste it as text)."
  })

  if ("reason" in initial) {
    setMode(false)
    notice.className = "editor-notice notice notice-info"
    notice.textContent = `This article opens in HTML source mode: ${initial.reason}. Editing the HTML keeps everything exactly.`
  } else {
    setMode(textarea.getAttribute("data-mode") !== "source")
  }

  // ---- preview before saving -------------------------------------------------------------------
  const preview = document.getElementById("edit-preview") ?? h("div", { id: "edit-preview" })
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!
  const submitLabel = submit.textContent ?? "Save as new revision"
  let previewedKey: string | null = null
  const keyOf = () => new URLSearchParams(new FormData(form) as unknown as Record<string, string>).toString()
  function invalidatePreview() {
    if (previewedKey === null) return
    previewedKey = null
    submit.textContent = submitLabel
    preview.classList.add("stale")
  }
  form.addEventListener("input", (e) => {
    if (e.target !== textarea) invalidatePreview()
  })
  form.addEventListener("submit", async (event) => {
    if (visualButton.getAttribute("aria-pressed") === "true") textarea.value = toHtml(view.state.doc)
    if (previewedKey !== null && previewedKey === keyOf()) return
    event.preventDefault()
    const key = keyOf()
    submit.disabled = true
    try {
      let res: Response
      try {
        res = await fetch(previewUrl, { method: "POST", body: new URLSearchParams(new FormData(form) as unknown as Record<string, string>), headers: { Accept: "application/json" } })
      } catch {
        throw new PreviewUnavailable("the network did not answer (are you offline?)")
      }
      // Signed out, the preview answers the sign-in page instead of its JSON.
      if (res.redirected || !(res.headers.get("content-type") ?? "").includes("json")) {
        throw new PreviewUnavailable("you are signed out. Saving keeps your text and asks you to sign in again")
      }
      const result = (await res.json()) as PreviewResult
      // A limit's refusal (429, 503) is a preview of its own, saying when to ask again; any other error is not.
      if (!res.ok && result.limited !== true) throw new PreviewUnavailable(`the server answered ${res.status}`)
      renderPreview(preview, result)
      // Over a limit no preview was made: the next press asks for one again.
      if (result.limited === true) return
      previewedKey = key
      // A save the preview knows will be refused is not invited: the button keeps its own words.
      const refused = result.refused !== null || !result.protected.ok
      submit.textContent = refused ? submitLabel : result.merge !== null && result.merge.conflicts > 0 ? "Continue to compare" : "Confirm and save"
    } catch (error) {
      renderUnavailable(preview, error instanceof PreviewUnavailable ? error.message : "something went wrong")
      previewedKey = key
    } finally {
      submit.disabled = false
    }
    preview.focus()
  })
}

/** What `POST /articles/{id}/preview` answers. */
interface PreviewResult {
  readonly changed: boolean
  readonly title_changed: boolean
  readonly body_changed: boolean
  readonly removed: ReadonlyArray<{ what: string; count: number }>
  readonly protected: { ok: boolean; count: number; violations: ReadonlyArray<{ kind: string; href: string | null; text: string }> }
  readonly refused: string | null
  readonly merge: { readonly with: string; readonly kept: number; readonly conflicts: number } | null
  /** No preview was made (429 or 503): `refused` says when to try again. */
  readonly limited?: boolean
}

/** The preview could not be had; its message says why. */
class PreviewUnavailable extends Error {}

const KIND: Record<string, string> = { removed: "Removed", changed: "Changed", forged: "Added (not allowed)", hidden: "Hidden or struck (not allowed)" }

/** A preview that could not be loaded says why, and claims nothing about the text. */
const renderUnavailable = (preview: HTMLElement, why: string): void => {
  preview.hidden = false
  preview.classList.remove("stale")
  preview.setAttribute("tabindex", "-1")
  preview.className = "edit-preview notice notice-error"
  preview.replaceChildren(h("p", {}, h("strong", {}, "No preview: "), `${why}.`), h("p", { class: "hint" }, "Nothing was checked. You can try again, or save."))
}

const renderPreview = (preview: HTMLElement, r: PreviewResult): void => {
  preview.hidden = false
  preview.classList.remove("stale")
  preview.setAttribute("tabindex", "-1")
  const refused = r.refused !== null || !r.protected.ok
  preview.className = `edit-preview notice ${refused ? "notice-error" : "notice-info"}`
  const items: Array<Node> = []
  const li = (...c: Array<Node | string>) => items.push(h("li", {}, ...c))
  if (r.limited === true) {
    // No preview was made: the sentence says when to ask again, and nothing else is claimed.
    if (r.refused !== null) li(r.refused)
    preview.replaceChildren(h("ul", {}, ...items))
    return
  }
  if (refused) {
    // A refusal is the whole story: the rest of the list would describe a save that will not happen.
    if (r.refused !== null) li(r.refused)
  } else if (r.merge !== null && r.merge.conflicts > 0) {
    li(`Someone saved ${r.merge.with} since you opened this page, and changed ${r.merge.conflicts === 1 ? "a part" : `${r.merge.conflicts} parts`} you changed too. Saving opens a page where you see their version beside yours and choose; nothing is lost.`)
  } else if (r.merge !== null) {
    li(`Someone saved ${r.merge.with} since you opened this page. Saving merges your changes with theirs${r.merge.kept > 0 ? ` (${r.merge.kept} of their changes kept)` : ""}.`)
    li(r.changed ? "Saving makes a new revision." : "Nothing else changes: saving makes no new revision.")
  } else if (!r.changed) li("Nothing changed: saving makes no new revision.")
  else li(`Saving makes a new revision (${[r.title_changed ? "title" : "", r.body_changed ? "body" : ""].filter(Boolean).join(" and ")} changed).`)
  // Until a conflict is settled nothing else about the result is known: claim nothing more. Refused,
  // what sanitising would remove is about a save that will not happen: only the links that refuse it.
  const conflict = r.merge !== null && r.merge.conflicts > 0
  if (!conflict && !refused) {
    if (r.removed.length === 0) li("The sanitiser keeps everything.")
    else li("The sanitiser will remove: ", h("ul", {}, ...r.removed.map((x) => h("li", {}, `${x.count} × ${x.what}`))))
    li(r.protected.count === 0 ? "No protected links." : `Protected links: all ${r.protected.count} kept.`)
  }
  if (!r.protected.ok) {
    li(
      "Protected links: saving will be refused because of these:",
      h("ul", {}, ...r.protected.violations.map((v) => h("li", {}, `${KIND[v.kind] ?? v.kind}: “${v.text || "(no text)"}”${v.href ? ` → ${v.href}` : ""}`))),
    )
  }
  preview.replaceChildren(
    h("p", {}, h("strong", {}, refused ? "Saving will be refused:" : "Before you save:")),
    h("ul", {}, ...items),
    h("p", { class: "hint" }, refused ? "Change the text above first; your text stays here." : "Press the button again to save, or keep editing."),
  )
}

const start = (): void => {
  const textarea = document.querySelector<HTMLTextAreaElement>("textarea#body[data-editor]")
  const form = textarea?.form
  const previewUrl = textarea?.getAttribute("data-preview")
  if (!textarea || !form || !previewUrl) return
  mount({ form, textarea, previewUrl })
  document.documentElement.classList.add("editor-ready")
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start)
else start()
