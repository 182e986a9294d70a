import type { ProtectedBlock } from "./protectedBlock.ts"
import { analyzeHtml, isRefusal } from "./sanitizeArticleHtml.ts"

const marker = /data-service-protected/i

// Blocks are a pure function of the body, so they are remembered for the last bodies seen: an
// edit's new body is the next edit's current body, and re-parsing it would double the cost of
// every edit. Bounded in entries and in characters (bodies and the blocks' text), so memory stays
// flat whatever the traffic: 256 bodies of 1 MiB would otherwise hold a quarter of a GiB.
const MEMO_LIMIT = 256
/** Characters the remembered bodies and their blocks may hold together (16 MiB at most as UTF-16). */
export const PROTECTED_BLOCKS_MEMO_CHARS = 8 * 1024 * 1024
const memo = new Map<string, { readonly blocks: ReadonlyArray<ProtectedBlock>; readonly chars: number }>()
let memoChars = 0

const charsOf = (html: string, blocks: ReadonlyArray<ProtectedBlock>): number =>
  blocks.reduce((n, b) => n + b.canonical.length + b.text.length + (b.href?.length ?? 0) + b.type.length, html.length)

const forget = (html: string): void => {
  const known = memo.get(html)
  if (known === undefined) return
  memo.delete(html)
  memoChars -= known.chars
}

/** Remembers the blocks of a sanitised body, as computed from the same parse that produced it. */
export const rememberProtectedBlocks = (html: string, blocks: ReadonlyArray<ProtectedBlock>): void => {
  if (!marker.test(html)) return
  forget(html)
  const chars = charsOf(html, blocks)
  if (chars > PROTECTED_BLOCKS_MEMO_CHARS) return
  memo.set(html, { blocks, chars })
  memoChars += chars
  while (memo.size > MEMO_LIMIT || memoChars > PROTECTED_BLOCKS_MEMO_CHARS) forget(memo.keys().next().value as string)
}

/** What the memo of protected blocks holds: entries and characters (for tests and operators). */
export const protectedBlocksMemoUse = (): { readonly entries: number; readonly chars: number } => ({ entries: memo.size, chars: memoChars })

/**
 * The protected blocks of a body when known without parsing it: none when it has no
 * `data-service-protected` text, the remembered ones when it was analysed lately; else undefined.
 */
export const knownProtectedBlocks = (html: string): ReadonlyArray<ProtectedBlock> | undefined =>
  marker.test(html) ? memo.get(html)?.blocks : []

/**
 * The canonical protected blocks of a (sanitised, stored) body: its outermost elements carrying
 * `data-service-protected`, in document order, read from the body as the sanitiser keeps it so
 * they compare equal to the blocks `applyEditPolicy` reads from a proposed body. The input limits
 * do not apply (a body stored before them keeps its blocks); throws (a defect) on a body the
 * sanitiser still refuses (nested deeper than any stored body can be), rather than report no
 * blocks for it.
 */
export const extractProtectedBlocks = (html: string): ReadonlyArray<ProtectedBlock> => {
  // Attribute names cannot hold character references, so without this text there is no block.
  if (!marker.test(html)) return []
  const known = memo.get(html)
  if (known !== undefined) return known.blocks
  const result = analyzeHtml(html, { storedForm: true })
  if (isRefusal(result)) throw new Error(`extractProtectedBlocks: ${result.detail}`)
  rememberProtectedBlocks(html, result.blocks)
  return result.blocks
}

/** What a stored body holds that a restore needs: its protected blocks and its word count. */
export interface StoredBody {
  readonly blocks: ReadonlyArray<ProtectedBlock>
  readonly wordCount: number
}

/**
 * The protected blocks and `"word count"` of a stored body (the current body, a revision) from
 * one parse, with the stored form's bound (linear in its length, as `extractProtectedBlocks`);
 * throws (a defect) on a body the sanitiser still refuses, which no stored body is.
 */
export const readStoredBody = (html: string): StoredBody => {
  const result = analyzeHtml(html, { storedForm: true })
  if (isRefusal(result)) throw new Error(`readStoredBody: ${result.detail}`)
  return { blocks: result.blocks, wordCount: result.wordCount }
}
