/** Editing commands the toolbar and the keyboard share. */
import { baseKeymap, chainCommands, lift, setBlockType, toggleMark, wrapIn } from "prosemirror-commands"
import type { Mark, MarkType, Node as PMNode, NodeType } from "prosemirror-model"
import { liftListItem, sinkListItem, splitListItem, wrapInList } from "prosemirror-schema-list"
import { type Command, type EditorState, TextSelection } from "prosemirror-state"
import { type HtmlAttrs, schema } from "./schema.ts"

const nodes = schema.nodes as Record<string, NodeType>
const marks = schema.marks as Record<string, MarkType>

/** Whether a mark (or one of its equivalents, e.g. `b` for bold) covers the selection. */
export const markActive = (state: EditorState, types: ReadonlyArray<MarkType>): boolean => {
  const { from, $from, to, empty } = state.selection
  if (empty) return types.some((t) => t.isInSet(state.storedMarks ?? $from.marks()) !== undefined)
  return types.some((t) => state.doc.rangeHasMark(from, to, t))
}

/** Toggles bold or italic: adds the modern element, removes either spelling. */
export const toggleEmphasis = (main: MarkType, alias: MarkType): Command => (state, dispatch) => {
  if (!markActive(state, [main, alias])) return toggleMark(main)(state, dispatch)
  const { from, to, empty } = state.selection
  if (empty) {
    if (dispatch) dispatch(state.tr.removeStoredMark(main).removeStoredMark(alias))
    return true
  }
  if (dispatch) dispatch(state.tr.removeMark(from, to, main).removeMark(from, to, alias))
  return true
}

/** The type of the text block the selection starts in. */
export const blockTypeAt = (state: EditorState): string => state.selection.$from.parent.type.name

/** Makes the selected blocks paragraphs, headings or code blocks. */
export const setBlock = (name: string): Command => setBlockType(nodes[name]!, { html: [] })

/** Whether the selection starts inside a quote (what the Quote button would lift out of). */
export const inQuote = (state: EditorState): boolean => {
  const { $from } = state.selection
  for (let d = $from.depth; d > 0; d--) if ($from.node(d).type === nodes["blockquote"]) return true
  return false
}

/** Wraps in or lifts out of a quote. */
export const toggleQuote: Command = (state, dispatch) => (inQuote(state) ? lift(state, dispatch) : wrapIn(nodes["blockquote"]!)(state, dispatch))

/** Whether the selection starts in an item of a list of this kind (what its button would lift out of). */
export const inList = (state: EditorState, name: "ul" | "ol"): boolean => {
  const { $from } = state.selection
  for (let d = $from.depth; d > 0; d--) if ($from.node(d).type === nodes["li"] && $from.node(d - 1).type === nodes[name]) return true
  return false
}

/** Wraps in a list, or lifts out of one of the same kind. */
export const toggleList = (name: "ul" | "ol"): Command => (state, dispatch) =>
  inList(state, name) ? liftListItem(nodes["li"]!)(state, dispatch) : wrapInList(nodes[name]!)(state, dispatch)

/** The link covering the cursor, if any. */
export const linkAt = (state: EditorState): Mark | undefined => {
  const { $from } = state.selection
  return marks["a"]!.isInSet($from.marks()) ?? marks["a"]!.isInSet($from.nodeAfter?.marks ?? [])
}

/** Links the selected text (never a protected element), or inserts the address as linked text. */
export const setLink = (href: string): Command => (state, dispatch) => {
  const mark = marks["a"]!.create({ html: [["href", href]] satisfies HtmlAttrs })
  const { from, to, empty } = state.selection
  const tr = state.tr
  if (empty) {
    const existing = linkAt(state)
    if (existing !== undefined) {
      // Change the address of the whole link around the cursor.
      const $pos = state.selection.$from
      let start = $pos.index()
      let end = start
      const parent = $pos.parent
      while (start > 0 && existing.isInSet(parent.child(start - 1).marks)) start--
      while (end < parent.childCount && existing.isInSet(parent.child(end).marks)) end++
      let a = $pos.start()
      for (let i = 0; i < start; i++) a += parent.child(i).nodeSize
      let b = a
      for (let i = start; i < end; i++) b += parent.child(i).nodeSize
      tr.removeMark(a, b, marks["a"]!).addMark(a, b, mark)
    } else {
      tr.insert(from, schema.text(href, [mark]))
      tr.setSelection(TextSelection.create(tr.doc, from + href.length))
    }
  } else {
    state.doc.nodesBetween(from, to, (node: PMNode, pos: number) => {
      if (node.isText) tr.removeMark(Math.max(from, pos), Math.min(to, pos + node.nodeSize), marks["a"]!).addMark(Math.max(from, pos), Math.min(to, pos + node.nodeSize), mark)
      return true
    })
  }
  if (dispatch) dispatch(tr.scrollIntoView())
  return true
}

/** Removes links from the selection (or the link around the cursor). */
export const unsetLink: Command = (state, dispatch) => {
  const { from, to, empty } = state.selection
  const a = empty ? state.selection.$from.start() : from
  const b = empty ? state.selection.$from.end() : to
  if (dispatch) dispatch(state.tr.removeMark(a, b, marks["a"]!))
  return true
}

/** Inserts an image at the cursor. */
export const insertImage = (src: string, alt: string): Command => (state, dispatch) => {
  const img = nodes["img"]!.create({ html: [["src", src], ["alt", alt]] satisfies HtmlAttrs })
  if (dispatch) dispatch(state.tr.replaceSelectionWith(img).scrollIntoView())
  return true
}

/** Enter in a run of bare text (no element of its own) continues with a paragraph. */
const splitPlain: Command = (state, dispatch) => {
  const { $from } = state.selection
  if ($from.parent.type !== nodes["plain"] || $from.node(-1).type === nodes["li"]) return false
  if (dispatch) {
    const tr = state.tr
    if (!state.selection.empty) tr.deleteSelection()
    tr.split(tr.selection.from, 1, [{ type: nodes["p"]!, attrs: { html: [] } }])
    dispatch(tr.scrollIntoView())
  }
  return true
}

/** The key bindings. */
export const keys: Record<string, Command> = {
  ...baseKeymap,
  Enter: chainCommands(splitListItem(nodes["li"]!), splitPlain, baseKeymap["Enter"]!),
  "Mod-b": toggleEmphasis(marks["strong"]!, marks["b"]!),
  "Mod-i": toggleEmphasis(marks["em"]!, marks["i"]!),
  "Mod-`": toggleMark(marks["code"]!),
  Tab: sinkListItem(nodes["li"]!),
  "Shift-Tab": liftListItem(nodes["li"]!),
  "Shift-Enter": (state, dispatch) => {
    if (dispatch) dispatch(state.tr.replaceSelectionWith(nodes["br"]!.create()).scrollIntoView())
    return true
  },
}
