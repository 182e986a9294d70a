/**
 * Gives back to the `pg` pool a connection that ended while it was checked out: without it, a few
 * database outages exhaust the pool for good.
 *
 * MikroORM runs its transactions on Kysely's controlled transactions, which release their pooled
 * connection only after a `BEGIN`, `COMMIT` or `ROLLBACK` that succeeded (kysely-org/kysely#1990,
 * open as of 0.29.6). On a connection an outage ended, each of those fails, so every transaction
 * open at the moment of the outage kept its place in the pool for ever: with a pool of 10, ten of
 * them, and then every statement waited for a connection, answered 503, until a restart (and the
 * pool's `end` at shutdown waited for them too).
 */
import type pg from "pg"

/** The error a connection ended while checked out is given back with: the pool drops it, never lends it again. */
const ENDED = new Error("The database connection ended while it was checked out.")

/**
 * Watches every client the pool lends (from its first checkout on): when its connection ends
 * while it is lent, it is released with an error, so the pool removes it and lends a new one to
 * whoever waits. The release the pool hands out with each checkout (`client.release`, which
 * throws when called twice) is kept behind a guard, so the holder's own later release, if any, is
 * ignored rather than thrown. One listener per client; nothing per statement.
 */
export const releaseEndedClients = (pool: pg.Pool): void => {
  const watched = new WeakSet<pg.PoolClient>()
  // The pool emits `acquire` before it sets the checkout's `release` on the client: the property
  // is made an accessor here, so that assignment lands behind the guard.
  pool.on("acquire", (client) => {
    if (watched.has(client)) return
    watched.add(client)
    // the current checkout's release, until it is called
    let lent: ((err?: Error | boolean) => void) | undefined
    const release = (err?: Error | boolean): void => {
      const give = lent
      lent = undefined
      give?.(err)
    }
    Object.defineProperty(client, "release", {
      configurable: true,
      enumerable: true,
      get: () => release,
      set: (next: (err?: Error | boolean) => void) => {
        lent = next
      },
    })
    client.once("end", () => release(ENDED))
  })
}
