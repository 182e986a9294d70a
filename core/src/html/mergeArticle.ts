import type { Element, RootContent } from "hast"
import { alignIds, type DiffBudget, makeDiffBudget } from "./diffBudget.ts"
import { parseHtmlFragment, storedFormBudget, TOO_DEEP, TOO_LARGE } from "./parseHtmlFragment.ts"
import { toProtectedBlock } from "./protectedBlock.ts"
import { serializeNodes } from "./serializeHtml.ts"
import { isHtmlSpace, isWhiteSpace, trimHtmlSpace, WORD_BOUNDARY_ELEMENTS } from "./words.ts"

/**
 * Three-way merge of an article (base, theirs, mine) over its units: the title as one unit and
 * each top-level block element of the (sanitised) body as one, a run of inline content between
 * blocks as one more. A unit changed on one side takes that side, changed the same way on both
 * is taken once, changed differently on both is a conflict. The two alignments (base to mine,
 * base to theirs) are jsdiff's Myers diffs of the units, each with a work budget; combining them
 * into regions is done here, because the merge must know the base range of every change (to
 * turn a change that would duplicate a protected link into a conflict) and because changes to
 * neighbouring units are not a conflict (a diff3 over lines of text treats them as one).
 */

/** One side of a merge: an article's title and its sanitised body. */
export interface MergeSide {
  readonly title: string
  readonly body: string
}

/** One conflicting unit: the HTML (or title) of each side; "" where a side has none there. */
export interface MergeConflict {
  /** `title`, or `body/<index>`: the 0-based index of the base body's first unit the conflict covers (for an insertion, the unit it comes before); no two conflicts share one. */
  readonly unit: string
  readonly base: string
  readonly theirs: string
  readonly mine: string
}

/** How one region of the body was settled. */
export type Resolution = "same" | "mine" | "theirs" | "both" | "conflict"

/** One region of the merged body: the base's units there, each side's, and which the result takes. */
export interface MergeChunk {
  /** Index of the region's first unit in the base body. */
  readonly baseIndex: number
  readonly base: string
  readonly theirs: string
  readonly mine: string
  readonly resolution: Resolution
}

/** The outcome of a three-way merge. */
export interface ArticleMerge {
  /** The merged title, or null when the titles conflict. */
  readonly title: string | null
  /** The merged body, or null when any body region conflicts. */
  readonly body: string | null
  readonly titleResolution: Resolution
  /** The body regions in order; `mergedBody` joins them where none conflicts. */
  readonly chunks: ReadonlyArray<MergeChunk>
  /** Every conflict, the title's first: empty for a clean merge. */
  readonly conflicts: ReadonlyArray<MergeConflict>
  /** Changes taken from theirs: the title when only they changed it, and each body region only they changed. */
  readonly mergedUnits: number
  /** Whether a side had too many changed units to align within the budget, so its changed middle was compared as one unit. */
  readonly coarse: boolean
}

/** A unit of a body: its HTML as written (with the whitespace after it) and what identifies it. */
interface Unit {
  /** The unit's HTML followed by the whitespace that separated it from the next. */
  readonly raw: string
  /** The unit's HTML without surrounding whitespace: units compare by it. */
  readonly key: string
  readonly inline: boolean
  /** Canonical forms of the protected blocks inside it. */
  readonly protectedKeys: ReadonlyArray<string>
}


const INLINE_BOUNDARIES: ReadonlySet<string> = new Set(["br", "img"])
const isBlock = (node: RootContent): node is Element =>
  node.type === "element" && WORD_BOUNDARY_ELEMENTS.has(node.tagName) && !INLINE_BOUNDARIES.has(node.tagName)
const isBlank = (node: RootContent): boolean => {
  if (node.type === "comment") return true
  if (node.type !== "text") return false
  for (let i = 0; i < node.value.length; i++) if (!isWhiteSpace(node.value.charCodeAt(i))) return false
  return true
}

// A unit is known by its HTML with attributes sorted by name: a side that only wrote a block's
// attributes in another order (an HTML library serialising it again) did not change it. Its
// text stays as written (whitespace inside a `pre` is its content).
const unitOf = (nodes: ReadonlyArray<RootContent>, inline: boolean, after: string): Unit => {
  const { html, protectedElements } = serializeNodes(nodes, { collectProtected: true })
  const key = serializeNodes(nodes, { sortAttributes: true }).html
  return { raw: html + after, key: trimHtmlSpace(key), inline, protectedKeys: protectedElements.map((e) => toProtectedBlock(e).canonical) }
}

/**
 * The units of a sanitised body, in order; their `raw` texts joined give the body back as the
 * serialiser writes it. Linear in the body: one parse (within the stored form's budget), one
 * serialisation. A body that cannot be parsed within it is one unit.
 */
export const bodyUnits = (html: string): ReadonlyArray<Unit> => {
  const root = parseHtmlFragment(html, storedFormBudget(html))
  if (root === TOO_DEEP || root === TOO_LARGE) return html === "" ? [] : [{ raw: html, key: trimHtmlSpace(html), inline: false, protectedKeys: [] }]
  const units: Array<Unit> = []
  const children = root.children
  let i = 0
  let leading = ""
  while (i < children.length && isBlank(children[i]!)) leading += serializeNodes([children[i++]!]).html
  while (i < children.length) {
    const start = i
    const block = isBlock(children[i]!)
    if (block) i++
    else while (i < children.length && !isBlock(children[i]!)) i++
    // Whitespace after a unit belongs to it; an inline run keeps its own trailing whitespace.
    let end = i
    if (!block) while (end > start && isBlank(children[end - 1]!)) end--
    let after = ""
    for (let j = end; j < i; j++) after += serializeNodes([children[j]!]).html
    while (i < children.length && isBlank(children[i]!)) after += serializeNodes([children[i++]!]).html
    if (end > start) units.push(unitOf(children.slice(start, end), !block, after))
  }
  if (leading !== "" && units.length > 0) units[0] = { ...units[0]!, raw: leading + units[0]!.raw }
  return units
}

/** A change one side made to the base: base units [oStart, oEnd) become `units`. */
export interface Hunk {
  readonly oStart: number
  readonly oEnd: number
  readonly units: ReadonlyArray<number>
}

/**
 * The hunks that turn `base` into `side` (unit ids): the comparison's Myers alignment, which
 * spends the merge's one budget (`DiffBudget`: one unit per ids compared, diagonal visited and
 * trace entry kept); when it would not fit, one hunk for the changed middle between what the two
 * share at either end (found in one pass, each step counted in `budget.fallback`).
 *
 * A run of neighbouring blocks replaced one for one (as many blocks as it had) is a hunk per
 * block: block by block, so that the other side's change to one of them, or beside them, meets
 * only that block (a region grown over the whole run would make a conflict of blocks only one
 * side changed). A run that adds or drops blocks stays one hunk: which of its blocks became
 * which is not known.
 */
const hunksOf = (budget: DiffBudget, base: ReadonlyArray<number>, side: ReadonlyArray<number>): { hunks: ReadonlyArray<Hunk>; coarse: boolean } => {
  const runs = alignIds(budget, Int32Array.from(base), Int32Array.from(side))
  if (runs === undefined) {
    let start = 0
    while (start < base.length && start < side.length && base[start] === side[start]) start++
    let endO = base.length
    let endS = side.length
    while (endO > start && endS > start && base[endO - 1] === side[endS - 1]) {
      endO--
      endS--
    }
    budget.fallback += start + (base.length - endO) + 1
    return { hunks: start === endO && start === endS ? [] : [{ oStart: start, oEnd: endO, units: side.slice(start, endS) }], coarse: true }
  }
  const hunks: Array<Hunk> = []
  const close = (hunk: Hunk): void => {
    if (hunk.oEnd - hunk.oStart !== hunk.units.length) hunks.push(hunk)
    else for (let k = 0; k < hunk.units.length; k++) hunks.push({ oStart: hunk.oStart + k, oEnd: hunk.oStart + k + 1, units: [hunk.units[k]!] })
  }
  let o = 0
  let s = 0
  let open: { oStart: number; oEnd: number; units: Array<number> } | null = null
  for (const run of runs) {
    if (run.op === "same") {
      if (open !== null) close(open)
      open = null
      o += run.count
      s += run.count
      continue
    }
    open ??= { oStart: o, oEnd: o, units: [] }
    if (run.op === "del") {
      o += run.count
      open.oEnd = o
    } else {
      for (let k = 0; k < run.count; k++) open.units.push(side[s + k]!)
      s += run.count
    }
  }
  if (open !== null) close(open)
  return { hunks, coarse: false }
}

/** The three-way rule for one unit: a side's change where only it changed, one change both made once, otherwise a conflict. */
const resolve = <T>(base: T, mine: T, theirs: T, same: (a: T, b: T) => boolean): Resolution =>
  same(mine, theirs) ? (same(mine, base) ? "same" : "both") : same(mine, base) ? "theirs" : same(theirs, base) ? "mine" : "conflict"

const sameIds = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/** A side's units over base [rs, re), its hunks there applied. */
const sideOver = (base: ReadonlyArray<number>, hunks: ReadonlyArray<Hunk>, rs: number, re: number): Array<number> => {
  const out: Array<number> = []
  let pos = rs
  for (const h of hunks) {
    for (; pos < h.oStart; pos++) out.push(base[pos]!)
    // One push a unit: spreading a hunk of a body's ~131 000 units into one call overflows the stack.
    for (const unit of h.units) out.push(unit)
    pos = h.oEnd
  }
  for (; pos < re; pos++) out.push(base[pos]!)
  return out
}

/** Two neighbouring regions of a merge, as `regionsOf` finds them (exported for `skipShared`'s tests). */
export interface Region {
  readonly oStart: number
  readonly oEnd: number
  readonly mine: ReadonlyArray<number>
  readonly theirs: ReadonlyArray<number>
  readonly resolution: Resolution
  /** How many of the taken side's first units the region before brought already (see `skipShared`): taken once, there. */
  readonly skip?: number
}

/**
 * Where each group of `sorted` ends (an index past its last hunk): hunks sorted by base start, then
 * end, grouped while the next one overlaps some hunk of the group (their base ranges overlap, or
 * both insert at one point). Given the order, a later hunk overlaps a replacement (a
 * hunk over base units) exactly when it starts before that replacement's end, and an insertion
 * exactly when it inserts at the same point (a replacement starting there sorts after it): so a
 * group is known by its replacements' furthest end and its last insertion's point. One pass,
 * linear in the hunks.
 */
export const hunkGroupEnds = (sorted: ReadonlyArray<Hunk>): Array<number> => {
  const ends: Array<number> = []
  let k = 0
  while (k < sorted.length) {
    let end = Number.NEGATIVE_INFINITY
    let insertAt = Number.NEGATIVE_INFINITY
    do {
      const h = sorted[k++]!
      if (h.oStart === h.oEnd) insertAt = h.oStart
      else end = Math.max(end, h.oEnd)
    } while (k < sorted.length && (sorted[k]!.oStart < end || (sorted[k]!.oStart === sorted[k]!.oEnd && sorted[k]!.oStart === insertAt)))
    ends.push(k)
  }
  return ends
}

/**
 * Settles each region of the base that either side changed. Hunks of the two sides whose base
 * ranges overlap (or that both insert at one point) make one region, grown until nothing else
 * overlaps it (`hunkGroupEnds`); a region only one side changed takes that side. Linear in the
 * hunks, and in the base units the regions span.
 */
const regionsOf = (base: ReadonlyArray<number>, mine: ReadonlyArray<Hunk>, theirs: ReadonlyArray<Hunk>): Array<Region> => {
  const tagged = [...mine.map((h) => ({ h, side: "mine" as const })), ...theirs.map((h) => ({ h, side: "theirs" as const }))]
  // Insertions before replacements at one point: an insertion at a replaced range's start comes before it.
  tagged.sort((a, b) => a.h.oStart - b.h.oStart || a.h.oEnd - b.h.oEnd)
  const regions: Array<Region> = []
  let from = 0
  for (const to of hunkGroupEnds(tagged.map((t) => t.h))) {
    const group = tagged.slice(from, to)
    from = to
    let rs = group[0]!.h.oStart
    let re = group[0]!.h.oEnd
    for (const g of group) {
      rs = Math.min(rs, g.h.oStart)
      re = Math.max(re, g.h.oEnd)
    }
    const ofSide = (side: "mine" | "theirs") => group.filter((g) => g.side === side).map((g) => g.h)
    const m = sideOver(base, ofSide("mine"), rs, re)
    const t = sideOver(base, ofSide("theirs"), rs, re)
    const o = base.slice(rs, re)
    const resolution = resolve(o, m, t, sameIds)
    const region: Region = { oStart: rs, oEnd: re, mine: m, theirs: t, resolution }
    const before = regions[regions.length - 1]
    const joined = before === undefined ? undefined : joinShared(base, before, region)
    if (joined === undefined) regions.push(before === undefined ? region : skipShared(before, region))
    else regions[regions.length - 1] = joined
  }
  return regions
}

/**
 * Two neighbouring regions one side each changed, each change beginning or ending where they meet
 * with the same units (both sides inserted them there, each in one hunk with a change of its
 * own beside it): the second takes its side's units without those, which the first takes.
 * Linear in the two sides' units: at most 2(|x| + |y|) comparisons.
 */
export const skipShared = (a: Region, b: Region): Region => {
  if (a.oEnd !== b.oStart || a.resolution === b.resolution || (a.resolution !== "mine" && a.resolution !== "theirs") || (b.resolution !== "mine" && b.resolution !== "theirs")) return b
  const x = a.resolution === "mine" ? a.mine : a.theirs
  const y = b.resolution === "mine" ? b.mine : b.theirs
  // The longest run that ends x and begins y (at most the shorter's length), as Knuth-Morris-Pratt
  // finds it: y's failure table, then x's last units run through it. Each of the two loops moves
  // forward or falls back at most as far as it went, so at most 2(|x| + |y|) comparisons, however
  // alike the units are (trying each length from the longest compared |y|²/2 for a paste of one
  // repeated paragraph: 4 million reads for 2 000 of them).
  const fail = new Int32Array(y.length)
  for (let i = 1, q = 0; i < y.length; i++) {
    while (q > 0 && y[i] !== y[q]) q = fail[q - 1]!
    if (y[i] === y[q]) q++
    fail[i] = q
  }
  let k = 0
  for (let i = Math.max(0, x.length - y.length); i < x.length; i++) {
    while (k > 0 && (k === y.length || x[i] !== y[k])) k = fail[k - 1]!
    if (k < y.length && x[i] === y[k]) k++
  }
  return k > 0 ? { ...b, skip: k } : b
}

/**
 * Two neighbouring regions one side each changed, one of them an insertion where the other's
 * change begins or ends, made one region when both sides brought the same units there: a side
 * that inserted a block and also changed its neighbour is one hunk (which of its blocks were
 * inserted is not known), so the other side's identical insertion beside it was a region of
 * its own, and the block was taken twice. The units both sides hold at the regions' start or end
 * are taken once, and what remains is settled by the three-way rule; undefined (the two stay
 * apart, as before) where nothing is shared or what remains conflicts. Linear in the two regions.
 */
const joinShared = (base: ReadonlyArray<number>, a: Region, b: Region): Region | undefined => {
  if (a.oEnd !== b.oStart || (a.oStart !== a.oEnd && b.oStart !== b.oEnd)) return undefined
  const sides = new Set([a.resolution, b.resolution])
  if (!sides.has("mine") || !sides.has("theirs")) return undefined
  const o = base.slice(a.oStart, b.oEnd)
  const m = [...a.mine, ...b.mine]
  const t = [...a.theirs, ...b.theirs]
  let head = 0
  while (head < m.length && head < t.length && m[head] === t[head]) head++
  let tail = 0
  while (tail < m.length - head && tail < t.length - head && m[m.length - 1 - tail] === t[t.length - 1 - tail]) tail++
  if (head + tail === 0) return undefined
  // The base's own units among the shared ones (kept by both) are not part of what remains.
  let oHead = 0
  while (oHead < head && oHead < o.length && o[oHead] === m[oHead]) oHead++
  let oTail = 0
  while (oTail < tail && oTail < o.length - oHead && o[o.length - 1 - oTail] === m[m.length - 1 - oTail]) oTail++
  const rest = resolve(o.slice(oHead, o.length - oTail), m.slice(head, m.length - tail), t.slice(head, t.length - tail), sameIds)
  if (rest === "conflict") return undefined
  return { oStart: a.oStart, oEnd: b.oEnd, mine: m, theirs: t, resolution: rest === "same" || rest === "both" ? "both" : rest }
}

/**
 * The units' HTML, one after another. Two runs of inline content from different places must not
 * run their words together: a newline goes between them unless the text so far ends in whitespace.
 * One pass: the text's last character is kept as it grows (a test of the whole text at each
 * meeting read it all again, up to a thousand meetings over a body of 1 MiB).
 */
const joinRaw = (units: ReadonlyArray<Unit>): string => {
  const parts: Array<string> = []
  let last = -1
  units.forEach((unit, i) => {
    const previous = units[i - 1]
    if (previous !== undefined && previous.inline && unit.inline && !isHtmlSpace(last)) {
      parts.push("\n")
      last = 0x0a
    }
    parts.push(unit.raw)
    if (unit.raw !== "") last = unit.raw.charCodeAt(unit.raw.length - 1)
  })
  return parts.join("")
}

const countKeys = (units: ReadonlyArray<Unit>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const unit of units) for (const key of unit.protectedKeys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/**
 * Merges three versions of an article: `base` (the revision mine was written against),
 * `theirs` (the current article) and `mine` (the edit). Bodies must be sanitised. Work: one parse
 * and two serialisations of each body (as written, and with attributes sorted: a block's
 * identity), and two alignments of units that share one budget of work
 * (`budget`, `DIFF_BUDGET` units by default, as a diff's), past which a side's changed middle is one unit.
 *
 * A protected link is never lost or doubled by the merge: where both sides hold a protected
 * block the same number of times and the merged body would not, the regions that moved it become
 * conflicts.
 */
export const mergeArticle = (base: MergeSide, theirs: MergeSide, mine: MergeSide, budget: DiffBudget = makeDiffBudget()): ArticleMerge => {
  const ids = new Map<string, number>()
  const split = (html: string): { ids: Array<number>; units: ReadonlyArray<Unit> } => {
    const units = bodyUnits(html)
    return {
      units,
      ids: units.map((unit) => {
        let id = ids.get(unit.key)
        if (id === undefined) ids.set(unit.key, (id = ids.size))
        return id
      }),
    }
  }
  const o = split(base.body)
  const m = split(mine.body)
  const t = split(theirs.body)
  const mineHunks = hunksOf(budget, o.ids, m.ids)
  const theirHunks = hunksOf(budget, o.ids, t.ids)
  const regions = regionsOf(o.ids, mineHunks.hunks, theirHunks.hunks)

  // Regions in base order, with the unchanged stretches between them: each side's units are
  // read at its own position, so every unit keeps the whitespace its side wrote after it.
  interface Chunk {
    readonly baseIndex: number
    readonly o: ReadonlyArray<Unit>
    readonly mine: ReadonlyArray<Unit>
    readonly theirs: ReadonlyArray<Unit>
    resolution: Resolution
    skip: number
  }
  let chunks: Array<Chunk> = []
  let pos = 0
  let mPos = 0
  let tPos = 0
  const push = (oEnd: number, mineLength: number, theirLength: number, resolution: Resolution, skip = 0): void => {
    chunks.push({
      baseIndex: pos,
      o: o.units.slice(pos, oEnd),
      mine: m.units.slice(mPos, (mPos += mineLength)),
      theirs: t.units.slice(tPos, (tPos += theirLength)),
      resolution,
      skip,
    })
    pos = oEnd
  }
  const same = (end: number): void => {
    if (end > pos) push(end, end - pos, end - pos, "same")
  }
  for (const region of regions) {
    same(region.oStart)
    push(region.oEnd, region.mine.length, region.theirs.length, region.resolution, region.skip)
  }
  same(o.ids.length)

  // An unchanged unit's whitespace after it is the side's that changed it (theirs when both did).
  const taken = (chunk: Chunk): ReadonlyArray<Unit> =>
    chunk.resolution === "mine" || chunk.resolution === "both"
      ? chunk.mine.slice(chunk.skip)
      : chunk.resolution === "conflict"
        ? []
        : chunk.resolution === "same"
          ? chunk.theirs.map((unit, i) => (unit.raw === chunk.o[i]!.raw ? chunk.mine[i]! : unit))
          : chunk.theirs.slice(chunk.skip)

  // Protected links: a block both sides hold equally often must be there as often in the result.
  const mineCounts = countKeys(m.units)
  const theirCounts = countKeys(t.units)
  // A conflict counts what either side would bring there, whichever the person then takes.
  const resultCounts = countKeys(chunks.flatMap((chunk) => (chunk.resolution === "conflict" ? [] : taken(chunk))))
  for (const chunk of chunks) {
    if (chunk.resolution !== "conflict") continue
    const mineHere = countKeys(chunk.mine)
    const theirsHere = countKeys(chunk.theirs)
    for (const key of new Set([...mineHere.keys(), ...theirsHere.keys()])) {
      resultCounts.set(key, (resultCounts.get(key) ?? 0) + Math.max(mineHere.get(key) ?? 0, theirsHere.get(key) ?? 0))
    }
  }
  const broken = new Set<string>()
  for (const [key, count] of theirCounts) if (mineCounts.get(key) === count && resultCounts.get(key) !== count) broken.add(key)
  for (const [key, count] of mineCounts) if (!theirCounts.has(key) && resultCounts.has(key) && resultCounts.get(key)! > count) broken.add(key)
  if (broken.size > 0) {
    for (const chunk of chunks) {
      // Only a change one side made alone is undone into a conflict: what both agree on stays.
      if (chunk.resolution !== "mine" && chunk.resolution !== "theirs") continue
      const touched = [...chunk.o, ...chunk.mine, ...chunk.theirs].some((unit) => unit.protectedKeys.some((key) => broken.has(key)))
      if (touched) chunk.resolution = "conflict"
    }
    // Units taken once in a region made a conflict are the next region's again: the person's choice there may leave them out.
    chunks.forEach((chunk, i) => {
      if (chunk.skip > 0 && (i === 0 || chunks[i - 1]!.resolution === "conflict")) chunk.skip = 0
    })
    // An insertion before base unit k and a change starting at unit k are two regions with one
    // index; both made conflicts here, they are one conflict, or `body/<k>` would name two
    // (and a choice made for one would be applied to both). One pass over the chunks.
    const coalesced: Array<Chunk> = []
    for (const chunk of chunks) {
      const before = coalesced[coalesced.length - 1]
      if (before === undefined || before.resolution !== "conflict" || chunk.resolution !== "conflict" || before.baseIndex !== chunk.baseIndex) {
        coalesced.push(chunk)
        continue
      }
      coalesced[coalesced.length - 1] = {
        baseIndex: before.baseIndex,
        o: [...before.o, ...chunk.o],
        mine: [...before.mine, ...chunk.mine],
        theirs: [...before.theirs, ...chunk.theirs],
        resolution: "conflict",
        skip: 0,
      }
    }
    chunks = coalesced
  }

  const html = (list: ReadonlyArray<Unit>): string => trimHtmlSpace(joinRaw(list))
  const titleResolution = resolve(base.title, mine.title, theirs.title, (a, b) => a === b)
  const conflicts: Array<MergeConflict> = []
  if (titleResolution === "conflict") conflicts.push({ unit: "title", base: base.title, theirs: theirs.title, mine: mine.title })
  const outChunks: Array<MergeChunk> = chunks.map((chunk) => {
    const c: MergeChunk = {
      baseIndex: chunk.baseIndex,
      base: html(chunk.o),
      // (a region's units taken once before it are left out of the side it takes, as in the merged body)
      theirs: html(chunk.resolution === "theirs" ? chunk.theirs.slice(chunk.skip) : chunk.theirs),
      mine: html(chunk.resolution === "mine" ? chunk.mine.slice(chunk.skip) : chunk.mine),
      resolution: chunk.resolution,
    }
    if (c.resolution === "conflict") conflicts.push({ unit: `body/${c.baseIndex}`, base: c.base, theirs: c.theirs, mine: c.mine })
    return c
  })
  return {
    title: titleResolution === "conflict" ? null : titleResolution === "mine" || titleResolution === "both" ? mine.title : theirs.title,
    titleResolution,
    chunks: outChunks,
    conflicts,
    mergedUnits: (titleResolution === "theirs" ? 1 : 0) + chunks.filter((chunk) => chunk.resolution === "theirs").length,
    body: outChunks.some((chunk) => chunk.resolution === "conflict") ? null : joinRaw(chunks.flatMap(taken)),
    coarse: mineHunks.coarse || theirHunks.coarse,
  }
}

/** How a person settled one conflict: one side's version, or their own HTML. */
export type ConflictChoice = { readonly take: "mine" | "theirs" } | { readonly html: string }

/**
 * The body a person settled: every region as the merge took it, each conflicting one as chosen
 * (`choices` keyed by the conflict's `unit`; an unsettled conflict keeps mine, so that nothing
 * the person wrote is lost). The result is to be sanitised like any body sent in.
 */
export const settleMerge = (merge: ArticleMerge, choices: ReadonlyMap<string, ConflictChoice>): string =>
  merge.chunks
    .map((chunk) => {
      if (chunk.resolution !== "conflict") return chunk.resolution === "mine" || chunk.resolution === "both" ? chunk.mine : chunk.theirs
      const choice = choices.get(`body/${chunk.baseIndex}`)
      return choice === undefined ? chunk.mine : "html" in choice ? choice.html : choice.take === "mine" ? chunk.mine : chunk.theirs
    })
    .filter((html) => html !== "")
    .join("\n")

