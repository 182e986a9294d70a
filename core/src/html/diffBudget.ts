/**
 * One budget of work for one comparison of two revisions, whoever asks for it (REST, MCP, the
 * revision page), and the aligning that spends it. Tokens (lines, words) are first interned as
 * integers, charging each token's length: a Map hashes and compares it once, so after that one
 * comparison costs one unit whatever the token's length. Aligning (Myers' O(ND) algorithm) then
 * charges one unit per diagonal visited, per trace entry kept and per pair of tokens compared. A
 * step that would go past the budget is not taken: the caller falls back to a coarser comparison
 * and says so. The same input spends the same units every time (a time limit would not).
 */

/** Units of work one comparison may spend aligning (characters interned, tokens compared). */
export const DIFF_BUDGET = 8 * 1024 * 1024

/** The work done so far by one comparison. */
export interface DiffBudget {
  /** Units the aligning may spend at most. */
  readonly limit: number
  /** Units spent on interning and aligning; never more than `limit`. */
  used: number
  /**
   * Units spent by the coarse fallbacks once the budget was out: one per line, word or character
   * they pass over, at most one pass over both bodies' lines and words (or texts).
   */
  fallback: number
}

/** A fresh budget for one comparison. */
export const makeDiffBudget = (limit: number = DIFF_BUDGET): DiffBudget => ({ limit, used: 0, fallback: 0 })

/** Takes `units` from the budget when they fit, and answers whether they did (nothing is taken otherwise). */
export const spend = (budget: DiffBudget, units: number): boolean => {
  if (budget.used + units > budget.limit) return false
  budget.used += units
  return true
}

/**
 * Interns the tokens of both sides as positive integers (equal tokens, equal numbers), charging
 * each token's length plus one; undefined, with nothing charged, when that does not fit.
 */
export const internTokens = (
  budget: DiffBudget,
  before: ReadonlyArray<string>,
  after: ReadonlyArray<string>,
): readonly [Int32Array, Int32Array] | undefined => {
  let cost = 0
  for (const token of before) cost += token.length + 1
  for (const token of after) cost += token.length + 1
  if (!spend(budget, cost)) return undefined
  const ids = new Map<string, number>()
  const intern = (tokens: ReadonlyArray<string>): Int32Array => {
    const out = new Int32Array(tokens.length)
    tokens.forEach((token, i) => {
      let id = ids.get(token)
      if (id === undefined) {
        id = ids.size + 1
        ids.set(token, id)
      }
      out[i] = id
    })
    return out
  }
  return [intern(before), intern(after)]
}

/** A run of one kind in an alignment: `count` tokens both sides share, or only the old side has, or only the new. */
export interface Run {
  readonly op: "same" | "del" | "ins"
  readonly count: number
}

const pushRun = (runs: Array<Run>, op: Run["op"], count: number): void => {
  if (count === 0) return
  const last = runs[runs.length - 1]
  if (last !== undefined && last.op === op) runs[runs.length - 1] = { op, count: last.count + count }
  else runs.push({ op, count })
}

/** Writes every change between two unchanged runs as its removals, then its additions. */
const normalise = (runs: ReadonlyArray<Run>): Array<Run> => {
  const out: Array<Run> = []
  let del = 0
  let ins = 0
  for (const run of runs) {
    if (run.op === "del") del += run.count
    else if (run.op === "ins") ins += run.count
    else {
      pushRun(out, "del", del)
      pushRun(out, "ins", ins)
      del = ins = 0
      pushRun(out, "same", run.count)
    }
  }
  pushRun(out, "del", del)
  pushRun(out, "ins", ins)
  return out
}

/**
 * The shortest alignment of two interned lists (Myers' greedy algorithm after trimming what they
 * share at both ends), as runs, removals before additions in each change; undefined when it
 * would spend more than the budget has left (what was spent trying stays spent).
 */
export const alignIds = (budget: DiffBudget, a: Int32Array, b: Int32Array): ReadonlyArray<Run> | undefined => {
  // Every comparison of two ids is one unit, taken before it is made.
  const same = (i: number, j: number): boolean | undefined => (spend(budget, 1) ? a[i] === b[j] : undefined)
  let start = 0
  const common = Math.min(a.length, b.length)
  for (;;) {
    if (start >= common) break
    const equal = same(start, start)
    if (equal === undefined) return undefined
    if (!equal) break
    start++
  }
  let endA = a.length
  let endB = b.length
  for (;;) {
    if (endA <= start || endB <= start) break
    const equal = same(endA - 1, endB - 1)
    if (equal === undefined) return undefined
    if (!equal) break
    endA--
    endB--
  }
  const n = endA - start
  const m = endB - start
  const middle: Array<Run> = []
  if (n === 0 || m === 0) {
    pushRun(middle, "del", n)
    pushRun(middle, "ins", m)
  } else {
    const max = n + m
    const offset = max + 1
    const v = new Int32Array(2 * max + 3)
    // trace[d]: v on the diagonals -d..d before step d, for walking back.
    const trace: Array<Int32Array> = []
    let found = -1
    for (let d = 0; d <= max && found < 0; d++) {
      // The trace entry kept (2d + 1 numbers) and the d + 1 diagonals visited.
      if (!spend(budget, 3 * d + 2)) return undefined
      trace.push(v.slice(offset - d, offset + d + 1))
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1
        let y = x - k
        while (x < n && y < m) {
          const equal = same(start + x, start + y)
          if (equal === undefined) return undefined
          if (!equal) break
          x++
          y++
        }
        v[offset + k] = x
        if (x >= n && y >= m) {
          found = d
          break
        }
      }
    }
    // Walk back from (n, m): each step d came from the diagonal that reached farthest before it.
    const backwards: Array<Run> = []
    let x = n
    let y = m
    for (let d = found; d >= 0; d--) {
      const before = trace[d]!
      const at = (k: number): number => before[k + d]!
      const k = x - y
      if (d === 0) {
        backwards.push({ op: "same", count: x })
        break
      }
      const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
      const prevX = at(prevK)
      const prevY = prevX - prevK
      const fromX = prevK === k + 1 ? prevX : prevX + 1
      backwards.push({ op: "same", count: x - fromX })
      backwards.push(prevK === k + 1 ? { op: "ins", count: 1 } : { op: "del", count: 1 })
      x = prevX
      y = prevY
    }
    for (let i = backwards.length - 1; i >= 0; i--) pushRun(middle, backwards[i]!.op, backwards[i]!.count)
  }
  const runs: Array<Run> = []
  pushRun(runs, "same", start)
  for (const run of normalise(middle)) pushRun(runs, run.op, run.count)
  pushRun(runs, "same", a.length - endA)
  return runs
}

/**
 * The coarse alignment used once the budget is out: what both lists share at the start and at the
 * end, the rest of each replaced whole. One fallback unit per pair of items compared.
 */
export const trimAlign = <T>(budget: DiffBudget, a: ReadonlyArray<T>, b: ReadonlyArray<T>, equals: (x: T, y: T) => boolean): ReadonlyArray<Run> => {
  let start = 0
  while (start < a.length && start < b.length && equals(a[start]!, b[start]!)) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && equals(a[endA - 1]!, b[endB - 1]!)) {
    endA--
    endB--
  }
  budget.fallback += start + (a.length - endA) + 1
  const runs: Array<Run> = []
  pushRun(runs, "same", start)
  pushRun(runs, "del", endA - start)
  pushRun(runs, "ins", endB - start)
  pushRun(runs, "same", a.length - endA)
  return runs
}
