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
 * `removed` otherwise; every unmatched new block is `forged`. A current block whose identical
 * new block an ancestor hides or strikes (`del`, `s`, a `details` outside its summary, `[hidden]`,
 * `[aria-hidden="true"]`), when the current one was not so hidden, is `hidden`: byte-identical
 * but no longer shown as it was. A violation carries the current block's `href` and text, or the
 * new block's for `forged`.
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
  // An identical new block that is shown, or hidden as the current one already was; a visible
  // current block takes a visible new one first, so a hidden copy beside it is the one refused.
  const take = (block: ProtectedBlock, hiddenToo: boolean): number | undefined => {
    const list = available.get(block.canonical)
    if (list === undefined) return undefined
    const at = list.findIndex((i) => next[i]!.hidden === block.hidden || (hiddenToo && next[i]!.hidden))
    if (at < 0) return undefined
    return list.splice(at, 1)[0]
  }
  // Per current block, in order: matched (null), hidden where it was not, or still to pair.
  const verdicts: Array<"hidden" | "unmatched" | null> = current.map(() => null)
  const pending: Array<number> = []
  current.forEach((block, i) => {
    const index = take(block, false)
    if (index === undefined) pending.push(i)
    else used[index] = true
  })
  for (const i of pending) {
    const block = current[i]!
    // Identical but hidden where it was not (a hidden current block may be shown again).
    const index = block.hidden ? take({ ...block, hidden: false }, false) : take(block, true)
    if (index === undefined) verdicts[i] = "unmatched"
    else {
      used[index] = true
      if (next[index]!.hidden && !block.hidden) verdicts[i] = "hidden"
    }
  }
  const pairWith = (block: ProtectedBlock, same: (candidate: ProtectedBlock) => boolean): boolean => {
    const index = next.findIndex((candidate, i) => !used[i] && candidate.tag === block.tag && same(candidate))
    if (index < 0) return false
    used[index] = true
    return true
  }
  // Pair by href first, for every block, then by text: a changed href with the same text is a change.
  const kinds: Array<ProtectedBlockViolation["kind"] | null> = current.map((block, i) =>
    verdicts[i] === "hidden"
      ? "hidden"
      : verdicts[i] === "unmatched" && block.href !== null && pairWith(block, (candidate) => candidate.href === block.href)
        ? "changed"
        : null,
  )
  const violations: Array<ProtectedBlockViolation> = []
  current.forEach((block, i) => {
    if (verdicts[i] === null) return
    violations.push(violation(kinds[i] ?? (pairWith(block, (candidate) => candidate.text === block.text) ? "changed" : "removed"), block))
  })
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
