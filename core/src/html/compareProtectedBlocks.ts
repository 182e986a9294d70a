import { Effect } from "effect"
import { ProtectedLinkChanged, type ProtectedBlockViolation } from "../errors.ts"
import type { ProtectedBlock } from "./protectedBlock.ts"

const violation = (kind: ProtectedBlockViolation["kind"], block: ProtectedBlock): ProtectedBlockViolation => ({
  kind,
  href: block.href,
  text: block.text,
})

/**
 * Compares the current protected blocks with those of a new body, as multisets of canonical
 * blocks (order is free: moving a block is allowed; two identical current blocks need two in
 * the new body). Every current block without an identical new one is `changed` when an
 * unmatched new block of the same tag has its `href` (or, failing that, its text), and
 * `removed` otherwise; every unmatched new block is `forged`. A violation carries the current
 * block's `href` and text, or the new block's for `forged`.
 */
export const compareProtectedBlocks = (
  current: ReadonlyArray<ProtectedBlock>,
  next: ReadonlyArray<ProtectedBlock>,
): ReadonlyArray<ProtectedBlockViolation> => {
  const available = new Map<string, Array<number>>()
  next.forEach((block, index) => {
    const list = available.get(block.canonical)
    if (list === undefined) available.set(block.canonical, [index])
    else list.push(index)
  })
  const used = new Array<boolean>(next.length).fill(false)
  const unmatched: Array<ProtectedBlock> = []
  for (const block of current) {
    const index = available.get(block.canonical)?.shift()
    if (index === undefined) unmatched.push(block)
    else used[index] = true
  }
  const pairWith = (block: ProtectedBlock, same: (candidate: ProtectedBlock) => boolean): boolean => {
    const index = next.findIndex((candidate, i) => !used[i] && candidate.tag === block.tag && same(candidate))
    if (index < 0) return false
    used[index] = true
    return true
  }
  // Pair by href first, for every block, then by text: a changed href with the same text is a change.
  const kinds: Array<ProtectedBlockViolation["kind"] | null> = unmatched.map((block) =>
    block.href !== null && pairWith(block, (candidate) => candidate.href === block.href) ? "changed" : null,
  )
  const violations: Array<ProtectedBlockViolation> = unmatched.map((block, i) =>
    violation(kinds[i] ?? (pairWith(block, (candidate) => candidate.text === block.text) ? "changed" : "removed"), block),
  )
  next.forEach((block, index) => {
    if (!used[index]) violations.push(violation("forged", block))
  })
  return violations
}

/** Fails with ProtectedLinkChanged listing every violation when the new blocks break the current ones. */
export const checkProtectedBlocks = (
  current: ReadonlyArray<ProtectedBlock>,
  next: ReadonlyArray<ProtectedBlock>,
): Effect.Effect<void, ProtectedLinkChanged> => {
  const blocks = compareProtectedBlocks(current, next)
  return blocks.length === 0 ? Effect.void : Effect.fail(new ProtectedLinkChanged({ blocks }))
}
