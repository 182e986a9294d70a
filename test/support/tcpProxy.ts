/**
 * A TCP proxy in front of the test PostgreSQL, so a test can take the database away without
 * touching the real server: `cut("refuse")` drops every connection and stops listening,
 * `cut("blackhole")` drops them and then accepts new ones without ever answering; `restore()`
 * forwards again on the same port.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from "node:net"
import { PG_ADMIN_URL } from "./databases.ts"

export interface TcpProxy {
  readonly port: number
  readonly cut: (mode: "refuse" | "blackhole") => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (targetHost: string, targetPort: number): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  let mode: "forward" | "blackhole" = "forward"
  const track = (s: Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => {})
  }
  const onConnection = (client: Socket) => {
    track(client)
    if (mode === "blackhole") return
    const upstream = createConnection({ host: targetHost, port: targetPort })
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  }
  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer(onConnection)
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => resolve(server))
    })
  let server: Server | null = await listen(0)
  const port = (server.address() as AddressInfo).port
  const stop = async () => {
    const s = server
    server = null
    for (const socket of sockets) socket.destroy()
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  return {
    port,
    cut: async (next) => {
      await stop()
      if (next === "blackhole") {
        mode = "blackhole"
        server = await listen(port)
      }
    },
    restore: async () => {
      await stop()
      mode = "forward"
      server = await listen(port)
    },
    close: stop,
  }
}

/**
 * A proxy in front of the test PostgreSQL server (`PG_ADMIN_URL`) and `databaseUrl` rewritten to
 * reach that database through it.
 */
export const startPostgresProxy = async (databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> => {
  const target = new URL(PG_ADMIN_URL)
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432))
  const url = new URL(databaseUrl)
  url.host = `127.0.0.1:${proxy.port}`
  return { proxy, url: url.toString() }
}
