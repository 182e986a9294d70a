/**
 * Hand-written, parameterised SQL on the ORM's own database client, for the hot read and counter
 * paths: no EntityManager fork, no identity map, no query builder, no hydration.
 *
 * The client is the one MikroORM drives (`connection.getNativeClient()`): the `pg` Pool for
 * PostgreSQL (same pool, same connect/statement/query timeouts) or the PGlite instance. Both
 * answer `query(text, params) -> { rows }` with real bind parameters ($1, $2, ...) and the ORM's
 * type parsers (timestamps arrive as strings, json/jsonb parsed). On the pg Pool each statement is
 * named, so a pooled connection parses and plans it once and then only binds and executes it. On PGlite a statement sent this
 * way waits for any open ORM transaction to finish (PGlite's exclusive transaction lock) instead of
 * running inside it.
 */
import type { Orm } from "./orm.ts"

interface NativeClient {
  readonly query: (
    text: string | { name: string; text: string; values: Array<unknown> },
    params?: Array<unknown>,
  ) => Promise<{ rows: Array<unknown> }>
}

/** The `pg` Pool (not PGlite): it takes named statements, prepared once per pooled connection. */
const isPgPool = (c: NativeClient): boolean =>
  typeof (c as { connect?: unknown }).connect === "function" && typeof (c as { totalCount?: unknown }).totalCount === "number"

const isNativeClient = (c: unknown): c is NativeClient =>
  typeof c === "object" && c !== null && typeof (c as { query?: unknown }).query === "function"

/**
 * Statement names by text, shared by every client of the process (a pooled connection must never
 * see one name for two texts). The texts are a fixed set, one per query shape, so this stays small.
 */
const names = new Map<string, string>()

/** Runs a statement and returns its rows. */
export type Sql = <R>(text: string, params: ReadonlyArray<unknown>) => Promise<Array<R>>

/** The ORM's native client as a `Sql` function; the client is fetched once, on first use. */
export const nativeSql = (orm: Orm): Sql => {
  let client: NativeClient | undefined
  let named = false
  let pending: Promise<NativeClient> | undefined
  const get = (): Promise<NativeClient> =>
    (pending ??= orm.driver
      .getConnection()
      .getNativeClient()
      .then((c) => {
        if (!isNativeClient(c)) throw new Error("The database driver exposes no query(text, params) client")
        client = c
        named = isPgPool(c)
        return c
      })
      .catch((e: unknown) => {
        pending = undefined
        throw e
      }))
  return async <R>(text: string, params: ReadonlyArray<unknown>) => {
    const c = client ?? (await get())
    if (!named) return (await c.query(text, params as Array<unknown>)).rows as Array<R>
    let name = names.get(text)
    if (name === undefined) names.set(text, (name = `cs_${names.size}`))
    return (await c.query({ name, text, values: params as Array<unknown> })).rows as Array<R>
  }
}

/** A JSON column's parameter: the text of the value (jsonb accepts it on both drivers), or null. */
export const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value))
