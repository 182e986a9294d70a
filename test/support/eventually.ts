/**
 * Polls `f` every 10 ms until `done` holds or `ms` pass; returns the last value (for the caller to
 * assert). A wait, never a speed check: the default fits a loaded 2-core machine (as `expect.poll`'s
 * in vitest.config.ts), and costs nothing where the effect comes sooner.
 */
export const eventually = async <A>(f: () => Promise<A> | A, done: (a: A) => boolean, ms = 10_000): Promise<A> => {
  const giveUpAt = Date.now() + ms
  let last = await f()
  while (!done(last) && Date.now() < giveUpAt) {
    await new Promise((r) => setTimeout(r, 10))
    last = await f()
  }
  return last
}
