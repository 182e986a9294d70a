/**
 * Large request bodies are decoded and parsed one per turn of the event loop.
 *
 * When several large uploads end in the same poll phase, their reads resume in the same drain of
 * the microtask queue, and each one's decode, depth check and `JSON.parse` (about 5 to 15 ms for
 * 1 MiB) would then run back to back, with every other request (a `/healthz`, another account's
 * small edit) waiting behind all of them. Here each large body waits for the ones before it and
 * then for a turn of its own (`setImmediate`, scheduled once the previous one is done, so it runs
 * in the next turn, after that turn's poll phase has read other requests). The event loop is then
 * held by at most one large body's parse at a time. Small bodies never wait.
 */

/** A body over this many bytes is parsed in a turn of its own. */
export const LARGE_BODY_BYTES = 64 * 1024

let tail: Promise<unknown> = Promise.resolve()

/** Runs `work` in a turn of the event loop of its own, after every earlier call's work. */
export const inOwnTurn = <A>(work: () => A): Promise<A> => {
  const run = tail.then(
    () =>
      new Promise<A>((resolve, reject) =>
        setImmediate(() => {
          try {
            resolve(work())
          } catch (e) {
            reject(e)
          }
        }),
      ),
  )
  tail = run.catch(() => undefined)
  return run
}

/** `work` at once for a small body, in a turn of its own for a large one (`LARGE_BODY_BYTES`). */
export const parseInTurn = <A>(bytes: number, work: () => A): A | Promise<A> => (bytes > LARGE_BODY_BYTES ? inOwnTurn(work) : work())
