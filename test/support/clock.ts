/**
 * A clock a test controls, for `startServer({ now })`: it stands still at the instant it was set to
 * and moves only when the test moves it, so minute windows and UTC days end when the test says.
 */
export interface TestClock {
  readonly now: () => number
  readonly set: (ms: number) => void
  readonly advance: (ms: number) => void
}

export const testClock = (startMs: number): TestClock => {
  let current = startMs
  return {
    now: () => current,
    set: (ms) => {
      current = ms
    },
    advance: (ms) => {
      current += ms
    },
  }
}

/** Today (UTC) at 12:00:30.000: half a minute into a minute and half a day into a day. */
export const middayToday = (): number => {
  const day = Math.floor(Date.now() / 86_400_000) * 86_400_000
  return day + 12 * 3_600_000 + 30_000
}

/**
 * A clock that runs at the machine's pace from `startMs` (for example `middayToday()`): for tests
 * whose steps need time to pass (newest-first orders, leases) but no day to end between them, such
 * as two edits whose `Edit-Limit-Remaining` are compared.
 */
export const runningClock = (startMs: number): { readonly now: () => number } => {
  const offset = startMs - Date.now()
  return { now: () => Date.now() + offset }
}
