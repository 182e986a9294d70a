/**
 * A bounded memo of a pure function of short text (a query string, a page's links): at most
 * `kept` values, the oldest dropped first; a key longer than `longest` is computed and not kept,
 * so a long one cannot push out the usual ones. A computation that throws keeps nothing.
 */
export const textMemo = <V>(kept: number, longest: number) => {
  const values = new Map<string, V>()
  return (key: string, make: () => V): V => {
    if (key.length > longest) return make()
    let value = values.get(key)
    if (value === undefined) {
      value = make()
      if (values.size >= kept) values.delete(values.keys().next().value as string)
      values.set(key, value)
    }
    return value
  }
}
