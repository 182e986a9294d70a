/**
 * The clients of `neighbour.bench.ts`, run in processes of their own, as clients are: a hostile
 * account's requests in a few loops (one process), and another account's small request one at a
 * time and `/healthz` one at a time (the probes, another process), all for a fixed number of
 * seconds (every loop checks the deadline; each request is bounded by the server's own limits),
 * then each waits for its requests still running and answers. The probes have their own since
 * 2026-11-27: sharing a thread with the hostile loops, they timed that thread's own work too
 * (twenty 1 MiB uploads and their garbage), not only the server's. Processes since 2026-11-28:
 * as worker threads of the server's process, the clients' garbage collection ran on the V8
 * platform threads the server's own concurrent marking needs (the hostile thread collected its
 * heap every 70 ms under the twenty-upload loads), which a client on another machine never does.
 */
import { monitorEventLoopDelay } from "node:perf_hooks"

/** What the bench hands the clients. */
export interface ClientSetup {
  readonly url: string
  /** The hostile account: an API key, its web sign-in, and the articles prepared for it. */
  readonly hostile: {
    readonly key: string
    readonly email: string
    readonly password: string
    readonly longArticle: string
    readonly diffArticle: string
    readonly diffFrom: number
    readonly diffTo: number
    readonly restoreArticle: string
    readonly restoreBig: number
    readonly restoreSmall: number
    readonly previewArticle: string
    readonly avifBomb: Uint8Array<ArrayBuffer>
    readonly bigBody: string
  }
  /** The other account: an API key, its article and a tiny PNG. */
  /** The neighbour's accounts (a key and an article each), taken in turn, and its PNG. */
  readonly neighbour: { readonly accounts: ReadonlyArray<{ readonly key: string; readonly article: string }>; readonly png: Uint8Array<ArrayBuffer> }
}

/** Which load one run makes. */
export type Load = "quiet" | "H1 find" | "H2 diff" | "H2 restore" | "H3 images" | "H3 dry runs" | "H3 previews"

/** The neighbour's small request: a tiny dry-run PUT, or a tiny PNG as featured image. */
export type Small = "put" | "png"

export interface RunRequest {
  readonly load: Load
  readonly small: Small
  readonly seconds: number
  /** Which clients this thread runs: the hostile loops, or the probes (neighbour and `/healthz`). */
  readonly role: "hostile" | "probes"
}

export interface RunAnswer {
  readonly healthz: ReadonlyArray<number>
  readonly small: ReadonlyArray<number>
  readonly smallStatuses: Record<string, number>
  readonly hostileStatuses: Record<string, number>
  /** The longest stall of this thread's own event loop, in ms: what its timings may hold of its own. */
  readonly ownStallMs: number
  /** CPU time of this client process during the run (every thread, its garbage collection included), in ms. */
  readonly ownCpuMs: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A fetch that reads the whole answer, and its time in milliseconds; a broken connection is status "error". */
const timed = async (url: string, init?: RequestInit): Promise<{ status: number | "error"; ms: number }> => {
  const started = performance.now()
  try {
    const response = await fetch(url, init)
    await response.arrayBuffer()
    return { status: response.status, ms: performance.now() - started }
  } catch {
    return { status: "error", ms: performance.now() - started }
  }
}

const count = (tally: Record<string, number>, status: number | string) => {
  tally[String(status)] = (tally[String(status)] ?? 0) + 1
}

/** A signed-in web session of the hostile account: its cookies and CSRF token. */
const signIn = async (setup: ClientSetup): Promise<{ cookie: string; csrf: string }> => {
  const jar = new Map<string, string>()
  const keep = (response: Response) => {
    for (const c of response.headers.getSetCookie()) {
      const [pair] = c.split(";")
      const at = pair!.indexOf("=")
      jar.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
  }
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
  const csrfOf = async (path: string) => {
    const r = await fetch(`${setup.url}${path}`, { headers: { cookie: cookie() }, redirect: "manual" })
    keep(r)
    return /name="_csrf" value="([^"]+)"/.exec(await r.text())?.[1] ?? ""
  }
  const form = new URLSearchParams({ _csrf: await csrfOf("/"), email: setup.hostile.email, password: setup.hostile.password, next: "/sites" })
  const r = await fetch(`${setup.url}/`, { method: "POST", body: form, headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded" }, redirect: "manual" })
  keep(r)
  await r.arrayBuffer()
  return { cookie: cookie(), csrf: await csrfOf(`/articles/${setup.hostile.previewArticle}`) }
}

/** The hostile loops of a load: how many, and one request each. */
const hostileOf = async (setup: ClientSetup, load: Load): Promise<{ loops: number; once: (i: number, n: number) => Promise<number | "error"> }> => {
  const h = setup.hostile
  const api = (path: string) => `${setup.url}/api/v1${path}`
  const auth = { authorization: `Bearer ${h.key}` }
  const json = { ...auth, "content-type": "application/json", prefer: "return=minimal" }
  switch (load) {
    case "quiet":
      return { loops: 0, once: async () => 0 }
    case "H1 find": {
      const body = JSON.stringify({ edits: [{ find: "a".repeat(20_000), replace: "b" }] })
      return { loops: 1, once: async () => (await timed(api(`/articles/${h.longArticle}?dry_run=true`), { method: "PATCH", headers: json, body })).status }
    }
    case "H2 diff":
      return { loops: 1, once: async () => (await timed(api(`/articles/${h.diffArticle}/diff?from=${h.diffFrom}&to=${h.diffTo}`), { headers: auth })).status }
    case "H2 restore":
      return {
        loops: 1,
        once: async (_i, n) =>
          (await timed(api(`/articles/${h.restoreArticle}/revisions/${n % 2 === 0 ? h.restoreBig : h.restoreSmall}/restore`), { method: "POST", headers: json, body: "{}" })).status,
      }
    case "H3 images":
      return {
        loops: 4,
        once: async () => {
          const form = new FormData()
          form.set("image", new Blob([h.avifBomb], { type: "image/avif" }), "bomb.avif")
          return (await timed(api(`/articles/${h.longArticle}/featured-image`), { method: "POST", headers: { ...auth, prefer: "return=minimal" }, body: form })).status
        },
      }
    case "H3 dry runs": {
      const body = JSON.stringify({ body: h.bigBody })
      return { loops: 20, once: async () => (await timed(api(`/articles/${h.previewArticle}?dry_run=true`), { method: "PUT", headers: json, body })).status }
    }
    case "H3 previews": {
      const session = await signIn(setup)
      const form = new URLSearchParams({ _csrf: session.csrf, title: "Preview", body: h.bigBody }).toString()
      return {
        loops: 20,
        once: async () =>
          (
            await timed(`${setup.url}/articles/${h.previewArticle}/preview`, {
              method: "POST",
              headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
              body: form,
            })
          ).status,
      }
    }
  }
}

const smallOf = (setup: ClientSetup, small: Small): (() => Promise<{ status: number | "error"; ms: number }>) => {
  const { accounts, png } = setup.neighbour
  let turn = 0
  const next = () => accounts[turn++ % accounts.length]!
  if (small === "put") {
    const body = JSON.stringify({ body: "<p>A tiny edit of the neighbour's article.</p>" })
    return () => {
      const n = next()
      return timed(`${setup.url}/api/v1/articles/${n.article}?dry_run=true`, { method: "PUT", headers: { authorization: `Bearer ${n.key}`, "content-type": "application/json" }, body })
    }
  }
  return () => {
    const n = next()
    const form = new FormData()
    form.set("image", new Blob([png], { type: "image/png" }), "tiny.png")
    return timed(`${setup.url}/api/v1/articles/${n.article}/featured-image`, { method: "POST", headers: { authorization: `Bearer ${n.key}`, prefer: "return=minimal" }, body: form })
  }
}

/** One run of one role: the hostile loops, or the neighbour and `/healthz`, for `seconds`, then the requests still out. */
const runOnce = async (setup: ClientSetup, request: RunRequest): Promise<RunAnswer> => {
  const stalls = monitorEventLoopDelay({ resolution: 10 })
  const answer = { healthz: [] as Array<number>, small: [] as Array<number>, smallStatuses: {}, hostileStatuses: {}, ownStallMs: 0, ownCpuMs: 0 }
  const hostile = request.role === "hostile" ? await hostileOf(setup, request.load) : { loops: 0, once: async () => 0 as const }
  const small = smallOf(setup, request.small)
  // Warm: the first image starts the decoding processes, the first body the worker thread.
  if (request.role === "probes") for (let i = 0; i < Math.max(3, setup.neighbour.accounts.length); i++) await small()
  stalls.enable()
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const deadline = started + request.seconds * 1000
  const open = () => performance.now() < deadline
  let sent = 0
  const loops = Array.from({ length: hostile.loops }, async (_, i) => {
    while (open()) {
      const status = await hostile.once(i, sent++)
      count(answer.hostileStatuses, status)
      // A refused attacker tries again at once, but not in a tight loop.
      if (status !== 200 && status !== 422 && status !== 413) await sleep(100)
    }
  })
  const probes = request.role !== "probes"
    ? []
    : [
        (async () => {
          while (open()) {
            answer.healthz.push((await timed(`${setup.url}/healthz`)).ms)
            await sleep(5)
          }
        })(),
        (async () => {
          // The hostile requests first: the neighbour arrives while they are being worked on.
          if (request.load !== "quiet") await sleep(500)
          while (open()) {
            const r = await small()
            answer.small.push(r.ms)
            count(answer.smallStatuses, r.status)
            // Within each of the neighbour's accounts' 60 requests a minute (150 ms an account).
            await sleep(150 / setup.neighbour.accounts.length)
          }
        })(),
      ]
  await Promise.all([...probes, ...loops])
  stalls.disable()
  const cpu = process.cpuUsage(cpuBefore)
  answer.ownCpuMs = (cpu.user + cpu.system) / 1000
  answer.ownStallMs = stalls.max / 1e6
  return answer
}

// Forked by the bench (`runRole`, structured-clone IPC): one job in, its answer out, then done.
if (process.send !== undefined) {
  process.once("message", (job: { setup: ClientSetup; request: RunRequest }) => {
    void runOnce(job.setup, job.request).then((answer) => process.send!(answer, () => process.exit(0)))
  })
}
