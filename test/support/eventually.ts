/** Polls `f` every 10 ms until `done` holds or `ms` pass; returns the last value (for the caller to assert). */
export const eventually = async <A>(f: () => Promise<A> | A, done: (a: A) => boolean, ms = 3_000): Promise<A> => {
  const giveUpAt = Date.now() + ms
  let last = await f()
  while (!done(last) && Date.now() < giveUpAt) {
    await new Promise((r) => setTimeout(r, 10))
    last = await f()
  }
  return last
}
