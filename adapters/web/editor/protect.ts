/**
 * The lock on protected links. Every step that would remove, duplicate or alter a protected
 * element is refused (a transaction filter compares the multiset of protected elements before and
 * after), and the editor says why next to the link. Moving stays possible: dragging is one step
 * that removes and inserts the same element; cutting keeps the element in place and marks it as
 * "to move", and the next paste of it moves it. A pasted element that claims to be protected
 * without being one cut here is pasted as a plain link.
 */
import type { Node as PMNode, Slice } from "prosemirror-model"
import { EditorState, Plugin, PluginKey, Selection, type Transaction } from "prosemirror-state"
import type { EditorView } from "prosemirror-view"
import { ReplaceStep } from "prosemirror-transform"
import { inert } from "./schema.ts"

/** What the lock reports when it refuses a step. */
export interface Refusal {
  /** Position of the protected element the step would have broken (in the state before it). */
  readonly pos: number
  readonly message: string
}

const isProtectedNode = (n: PMNode): boolean => n.type.name === "protected_inline" || n.type.name === "protected_block"

/** A protected node's identity: its exact HTML, and whether a link was wrapped around it. */
const signature = (n: PMNode): string => `${n.attrs["html"] as string}${n.marks.some((m) => m.type.name === "a") ? "\u0000linked" : ""}`

/** Every protected node of a document with its position. */
export const protectedNodes = (doc: PMNode): Array<{ node: PMNode; pos: number }> => {
  const out: Array<{ node: PMNode; pos: number }> = []
  doc.descendants((node, pos) => {
    if (isProtectedNode(node)) out.push({ node, pos })
    return !node.isTextblock || node.childCount > 0
  })
  return out
}

const counts = (doc: PMNode): Map<string, number> => {
  const m = new Map<string, number>()
  for (const { node } of protectedNodes(doc)) m.set(signature(node), (m.get(signature(node)) ?? 0) + 1)
  return m
}

const sameCounts = (a: Map<string, number>, b: Map<string, number>): boolean => {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

interface LockState {
  /** Signatures of protected elements cut and not yet pasted: a paste of one of them moves it. */
  readonly toMove: ReadonlyArray<string>
}

/** The lock plugin's key. */
export const lockKey = new PluginKey<LockState>("protected-lock")

/** Meta flag for the lock's own transactions (a cut that keeps protected elements, a move by paste). */
const OWN = "protected-lock-own"

const textOf = (n: PMNode): string => {
  const el = inert().createElement("div")
  el.innerHTML = n.attrs["html"] as string
  return (el.textContent ?? "").trim() || "(no text)"
}

/** Deletes the selection except the protected elements in it; returns their signatures. */
const cutKeepingProtected = (state: EditorState): { tr: Transaction; kept: Array<string> } | null => {
  const { from, to } = state.selection
  const kept: Array<{ from: number; to: number; sig: string }> = []
  state.doc.nodesBetween(from, to, (node, pos) => {
    if (isProtectedNode(node)) {
      kept.push({ from: pos, to: pos + node.nodeSize, sig: signature(node) })
      return false
    }
    return true
  })
  if (kept.length === 0) return null
  const tr = state.tr
  // Delete the gaps between kept elements, last first, so earlier positions stay valid.
  const gaps: Array<[number, number]> = []
  let start = from
  for (const k of kept) {
    if (k.from > start) gaps.push([start, k.from])
    start = Math.max(start, k.to)
  }
  if (to > start) gaps.push([start, to])
  for (const [a, b] of gaps.reverse()) tr.delete(a, b)
  // The caret where the cut began, as after any cut: a selection still spanning the kept elements
  // (Ctrl+A maps to all of the new text) would make the next key typed over them, which is refused.
  tr.setSelection(Selection.near(tr.doc.resolve(tr.mapping.map(from, -1))))
  return { tr: tr.setMeta(OWN, true), kept: kept.map((k) => k.sig) }
}

/** Whether a transaction replaces a selection with something new (typed or composed text), not only deletes it. */
const typedOver = (tr: Transaction, state: EditorState): boolean =>
  !state.selection.empty && tr.getMeta("uiEvent") === undefined && tr.steps.some((step) => step instanceof ReplaceStep && step.slice.size > 0)

/**
 * The lock plugin. `report` is called (after the refused transaction, outside the dispatch) with
 * the element and the reason, to show next to it.
 */
export const protectedLock = (report: (view: EditorView, refusal: Refusal) => void): Plugin<LockState> => {
  let viewRef: EditorView | null = null
  const later = (refusal: Refusal) =>
    queueMicrotask(() => {
      if (viewRef !== null) report(viewRef, refusal)
    })
  return new Plugin<LockState>({
    key: lockKey,
    state: {
      init: () => ({ toMove: [] }),
      apply: (tr, value) => {
        const meta = tr.getMeta(lockKey) as LockState | undefined
        return meta ?? value
      },
    },
    view: (view) => {
      viewRef = view
      return { destroy: () => void (viewRef = null) }
    },
    filterTransaction: (tr, state) => {
      if (!tr.docChanged || tr.getMeta(OWN) === true) return true
      const before = counts(state.doc)
      const after = counts(tr.doc)
      if (sameCounts(before, after)) return true
      const uiEvent = tr.getMeta("uiEvent") as string | undefined
      if (uiEvent === "cut") {
        // Keep the protected elements where they are, delete the rest, and remember them as "to move".
        queueMicrotask(() => {
          const view = viewRef
          if (view === null) return
          const cut = cutKeepingProtected(view.state)
          if (cut === null) return
          view.dispatch(cut.tr.setMeta(lockKey, { toMove: [...lockKey.getState(view.state)!.toMove, ...cut.kept] }))
          const first = protectedNodes(view.state.doc).find((p) => cut.kept.includes(signature(p.node)))
          if (first !== undefined) {
            report(view, { pos: first.pos, message: `“${textOf(first.node)}” is protected, so cutting leaves it here. Paste to move it; it cannot be deleted.` })
          }
        })
        return false
      }
      const lost = protectedNodes(state.doc).find(({ node }) => (after.get(signature(node)) ?? 0) < (before.get(signature(node)) ?? 0))
      if (lost !== undefined && typedOver(tr, state)) {
        // Typing over a selection deletes it first: refused as Delete over it is, saying what works instead.
        later({ pos: lost.pos, message: `Typing would replace the selection, and it holds “${textOf(lost.node)}”, a protected link that cannot be deleted. Select only the text around it, or cut the selection first (a cut leaves protected links in place), then type.` })
      } else if (lost !== undefined) {
        later({ pos: lost.pos, message: `“${textOf(lost.node)}” is a protected link: it cannot be deleted or edited, only moved (drag it, or cut and paste it).` })
      } else {
        const pos = Math.min(state.selection.from, state.doc.content.size)
        later({ pos, message: "Protected links cannot be copied or changed. Paste copies them as plain links." })
      }
      return false
    },
    props: {
      // A pasted element that claims to be protected keeps that claim only when it was cut here.
      transformPastedHTML: (html, view) => {
        const toMove = [...(lockKey.getState(view.state)?.toMove ?? [])]
        const holder = inert().createElement("div")
        holder.innerHTML = html
        for (const el of Array.from(holder.querySelectorAll("[data-service-protected]"))) {
          if (el.parentElement?.closest("[data-service-protected]")) continue
          // A copied element can carry ProseMirror's slice marker (when it is the first one copied).
          const plain = el.cloneNode(true) as Element
          plain.removeAttribute("data-pm-slice")
          const i = toMove.indexOf(plain.outerHTML)
          if (i >= 0) toMove.splice(i, 1)
          else for (const inner of [el, ...Array.from(el.querySelectorAll("[data-service-protected]"))]) inner.removeAttribute("data-service-protected")
        }
        return holder.innerHTML
      },
      handlePaste: (view, _event, slice) => movePaste(view, slice),
      handleDrop: (view, _event, slice, moved) => (moved ? false : movePaste(view, slice)),
    },
  })
}

/** A paste holding elements cut here: insert it and remove those elements from where they were. */
const movePaste = (view: EditorView, slice: Slice): boolean => {
  const toMove = [...(lockKey.getState(view.state)?.toMove ?? [])]
  const pasted: Array<string> = []
  slice.content.descendants((node) => {
    if (isProtectedNode(node)) pasted.push(signature(node))
    return true
  })
  const moving = pasted.filter((sig) => {
    const i = toMove.indexOf(sig)
    if (i < 0) return false
    toMove.splice(i, 1)
    return true
  })
  if (moving.length === 0) return false
  const tr = view.state.tr.replaceSelection(slice)
  const insertedFrom = tr.mapping.map(view.state.selection.from, -1)
  const insertedTo = tr.selection.from
  const originals: Array<{ from: number; to: number }> = []
  const wanted = [...moving]
  tr.doc.descendants((node, pos) => {
    if (!isProtectedNode(node)) return true
    const inside = pos >= insertedFrom && pos < insertedTo
    const i = wanted.indexOf(signature(node))
    if (!inside && i >= 0) {
      wanted.splice(i, 1)
      originals.push({ from: pos, to: pos + node.nodeSize })
    }
    return false
  })
  for (const o of originals.reverse()) tr.delete(o.from, o.to)
  view.dispatch(tr.setMeta(lockKey, { toMove }).scrollIntoView())
  return true
}
