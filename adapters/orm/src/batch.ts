/**
 * Coalesces lookups by key made in the same turn of the event loop into one statement: requests
 * handled side by side (keep-alive clients under load) share one database round trip instead of
 * one each. Each caller gets its own row, or undefined; a failed statement fails every caller of
 * that batch.
 */
export const batchedLookup = <R>(
  load: (keys: ReadonlyArray<string>) => Promise<ReadonlyArray<R>>,
  keyOfRow: (row: R) => string,
  maxBatch = 100,
): ((key: string) => Promise<R | undefined>) => {
  type Waiter = { readonly key: string; readonly resolve: (row: R | undefined) => void; readonly reject: (e: unknown) => void }
  let pending: Array<Waiter> = []
  let scheduled: ReturnType<typeof setImmediate> | undefined

  const flush = () => {
    if (scheduled !== undefined) clearImmediate(scheduled)
    scheduled = undefined
    const batch = pending
    pending = []
    const keys = [...new Set(batch.map((w) => w.key))]
    load(keys).then(
      (rows) => {
        const byKey = new Map(rows.map((row) => [keyOfRow(row), row]))
        for (const w of batch) w.resolve(byKey.get(w.key))
      },
      (e: unknown) => {
        for (const w of batch) w.reject(e)
      },
    )
  }

  return (key) =>
    new Promise<R | undefined>((resolve, reject) => {
      pending.push({ key, resolve, reject })
      if (pending.length >= maxBatch) flush()
      else scheduled ??= setImmediate(flush)
    })
}
