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
 * new block's for `forged`. Linear: at most 4 × (current + new blocks) steps (`work.steps`,
 * when given, counts them), whatever the blocks.
 */
export const compareProtectedBlocks = (
  current: ReadonlyArray<ProtectedBlock>,
  next: ReadonlyArray<ProtectedBlock>,
  work: { steps: number } = { steps: 0 },
): ReadonlyArray<ProtectedBlockViolation> => {
  const used = new Array<boolean>(next.length).fill(false)
  // Queues of new blocks by a key, in document order, each read from its head: a used entry is
  // passed over once, so all the pairing is linear in the blocks (`work.steps` counts entries read).
  type Queue = { readonly items: Array<number>; head: number }
  const queues = (key: (block: ProtectedBlock) => string | null): Map<string, Queue> => {
    const map = new Map<string, Queue>()
    next.forEach((block, index) => {
      const k = key(block)
      if (k === null) return
      const queue = map.get(k)
      if (queue === undefined) map.set(k, { items: [index], head: 0 })
      else queue.items.push(index)
    })
    return map
  }
  const takeFrom = (queue: Queue | undefined): number | undefined => {
    if (queue === undefined) return undefined
    while (queue.head < queue.items.length) {
      work.steps++
      const index = queue.items[queue.head++]!
      if (!used[index]) {
        used[index] = true
        return index
      }
    }
    return undefined
  }
  const shown = queues((block) => (block.hidden ? null : block.canonical))
  const hiddenCopies = queues((block) => (block.hidden ? block.canonical : null))
  // Per current block, in order: matched (null), hidden where it was not, or still to pair.
  const verdicts: Array<"hidden" | "unmatched" | null> = current.map(() => null)
  const pending: Array<number> = []
  // An identical new block placed as the current one is (shown, or hidden already) first, so a
  // hidden copy beside a shown one is the one refused.
  current.forEach((block, i) => {
    work.steps++
    if (takeFrom((block.hidden ? hiddenCopies : shown).get(block.canonical)) === undefined) pending.push(i)
  })
  for (const i of pending) {
    const block = current[i]!
    work.steps++
    // Identical but hidden where it was not (a hidden current block may be shown again).
    if (block.hidden) {
      if (takeFrom(shown.get(block.canonical)) === undefined) verdicts[i] = "unmatched"
    } else if (takeFrom(hiddenCopies.get(block.canonical)) !== undefined) verdicts[i] = "hidden"
    else verdicts[i] = "unmatched"
  }
  const byHref = queues((block) => (block.href === null ? null : `${block.tag}\u0000${block.href}`))
  const byText = queues((block) => `${block.tag}\u0000${block.text}`)
  // Pair by href first, for every block, then by text: a changed href with the same text is a change.
  const kinds: Array<ProtectedBlockViolation["kind"] | null> = current.map((block, i) =>
    verdicts[i] === "hidden"
      ? "hidden"
      : verdicts[i] === "unmatched" && block.href !== null && takeFrom(byHref.get(`${block.tag}\u0000${block.href}`)) !== undefined
        ? "changed"
        : null,
  )
  const violations: Array<ProtectedBlockViolation> = []
  current.forEach((block, i) => {
    if (verdicts[i] === null) return
    violations.push(violation(kinds[i] ?? (takeFrom(byText.get(`${block.tag}\u0000${block.text}`)) !== undefined ? "changed" : "removed"), block))
  })
  next.forEach((block, index) => {
    work.steps++
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
