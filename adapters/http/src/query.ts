import { namedParametersRefusal } from "@content-site/core"

/**
 * The query string as one value per name; a repeated parameter is a 400 naming it (a bounded
 * answer however many there are: namedParametersRefusal). The object has
 * no prototype, so `__proto__`, `constructor` and the like are plain names: they are seen as
 * unknown parameters instead of slipping past as the prototype's setter.
 */
export const queryObject = (querystring: string): Record<string, string> => {
  const out: Record<string, string> = Object.create(null) as Record<string, string>
  // most requests have none
  if (querystring === "") return out
  const params = new URLSearchParams(querystring)
  const repeated = new Set<string>()
  for (const [name, value] of params) {
    if (Object.hasOwn(out, name)) repeated.add(name)
    else out[name] = value
  }
  if (repeated.size > 0) {
    throw namedParametersRefusal(
      [...repeated],
      "Repeated query parameter",
      (named) => `Query parameter ${named} is given more than once; give each parameter at most once.`,
    )
  }
  return out
}

/** Names of the query parameters not in `allowed` (an empty list: the route takes none). */
export const unknownQueryParameters = (query: Record<string, string>, allowed: ReadonlyArray<string>): ReadonlyArray<string> =>
  Object.keys(query).filter((name) => !allowed.includes(name))

/**
 * Reads a query string that may carry only the `allowed` parameters, each at most once: anything
 * else is an InvalidRequest (400) naming it. Every route that is not an OAuth protocol endpoint
 * goes through this or a core query schema, so no parameter is ever silently ignored.
 */
export const strictQuery = (querystring: string, allowed: ReadonlyArray<string>): Record<string, string> => {
  const query = queryObject(querystring)
  const unknown = unknownQueryParameters(query, allowed)
  if (unknown.length > 0) {
    throw namedParametersRefusal(
      unknown,
      "Unknown query parameter",
      (named) => `Unknown query parameter ${named}${allowed.length === 0 ? "; this endpoint takes none" : `; allowed: ${allowed.join(", ")}`}.`,
    )
  }
  return query
}
