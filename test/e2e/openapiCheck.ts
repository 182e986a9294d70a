/**
 * Checks responses against the OpenAPI document the server publishes: the operation is found by
 * method and path template, the response by status, and the body validated with Ajv (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1).
 */
import { Ajv2020 } from "ajv/dist/2020.js"

type Json = Record<string, any>

export interface ResponseChecker {
  /** Validates one response; throws with the schema errors when it does not conform. */
  readonly check: (method: string, path: string, status: number, contentType: string | null, body: unknown) => void
}

export const responseChecker = (doc: Json): ResponseChecker => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi")
  const routes: Array<{ method: string; regex: RegExp; op: Json }> = []
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const regex = new RegExp(`^/api/v1${template.replace(/\{\w+\}/g, "[^/]+")}$`)
    for (const [method, op] of Object.entries(item)) routes.push({ method: method.toUpperCase(), regex, op })
  }
  // More specific templates first (literal segments beat parameters).
  routes.sort((a, b) => b.regex.source.length - a.regex.source.length)
  const cache = new Map<string, ReturnType<typeof ajv.compile>>()
  const rewrite = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'))
  return {
    check: (method, path, status, contentType, body) => {
      const route = routes.find((r) => r.method === method && r.regex.test(path))
      if (route === undefined) return
      const response = route.op.responses[String(status)]
      if (response === undefined) throw new Error(`${method} ${path}: status ${status} is not documented in the OpenAPI document`)
      const media = Object.keys(response.content ?? {})[0]
      if (media === undefined) return
      if (contentType === null || !contentType.startsWith(media)) {
        throw new Error(`${method} ${path} ${status}: content type ${contentType} is not the documented ${media}`)
      }
      const key = `${route.op.operationId}:${status}`
      let validate = cache.get(key)
      if (validate === undefined) {
        validate = ajv.compile(rewrite(response.content[media].schema) as Json)
        cache.set(key, validate)
      }
      if (!validate(body)) {
        throw new Error(`${method} ${path} ${status}: body does not match the OpenAPI schema: ${ajv.errorsText(validate.errors)}`)
      }
    },
  }
}

/** Compiles any schema of the document (a request body's, a parameter's) against its components. */
export const schemaCompiler = (doc: Json): ((schema: unknown) => (value: unknown) => boolean) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi")
  return (schema) => {
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as Json)
    return (value) => validate(value) === true
  }
}
