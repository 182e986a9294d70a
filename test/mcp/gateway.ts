import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * An authenticating gateway for tools that cannot do OAuth (the conformance runner): it forwards
 * every request to the server's `/mcp` with the access token added. Host and Origin naming the
 * gateway itself become the server's; any other Host or Origin is passed on untouched, so the
 * server's DNS-rebinding check still sees foreign ones.
 */
export const startGateway = async (targetBase: string, token: string): Promise<{ url: string; close: () => Promise<void> }> => {
  const target = new URL(targetBase)
  let own = ""
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers }
    if (headers.host === own) headers.host = target.host
    if (headers.origin === `http://${own}`) headers.origin = target.origin
    headers.authorization = `Bearer ${token}`
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on("error", () => {
      res.statusCode = 502
      res.end()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  own = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: `http://${own}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
