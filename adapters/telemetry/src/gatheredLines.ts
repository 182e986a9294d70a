import sonicBoom, { type SonicBoom } from "sonic-boom"

// the package's export is the class itself (CommonJS), which its types call `SonicBoom`
const SonicBoomClass = sonicBoom as unknown as typeof SonicBoom

/** The destinations still open, written out synchronously when the process exits. */
const open = new Set<GatheredLines>()
let exitHook = false

/**
 * pino's destination for JSON lines: lines are gathered and handed to SonicBoom (pino's own
 * asynchronous file writer) as one string once they hold `gather` characters, and whatever is
 * gathered every `flushMs`, on `flush`, and synchronously when the process exits. Why not
 * SonicBoom's own `minLength`: each line it is given, it measures the UTF-8 length of everything
 * it has gathered so far (a joined string, flattened again for every line): about 4 µs a line
 * against 0.7 here, in a microbench of 270-byte lines (`docs/benchmarks.md`). Here a line costs
 * a push and an addition; the join is once a write. Bounded: at most `gather` characters plus
 * one line wait here (every `write` past the bound hands them over); what SonicBoom has not yet
 * written waits there, as with pino's own destination.
 */
export class GatheredLines {
  #parts: Array<string> = []
  #size = 0
  #broken = false
  readonly #gather: number
  readonly #out: SonicBoom
  readonly #timer: ReturnType<typeof setInterval>

  constructor(fd: number, gather: number, flushMs: number) {
    this.#gather = gather
    this.#out = new SonicBoomClass({ fd, sync: false })
    // a reader that went away (a closed pipe) ends the log, as pino's own destination does; any other failure is the process's
    this.#out.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err
      this.#broken = true
      this.#parts = []
      this.#size = 0
    })
    this.#timer = setInterval(() => this.#handOver(), flushMs)
    this.#timer.unref()
    open.add(this)
    if (!exitHook) {
      exitHook = true
      process.on("exit", () => {
        for (const lines of open) lines.flushSync()
      })
    }
  }

  /** Takes one line (pino writes each line whole, its newline included). */
  write(line: string): boolean {
    if (this.#broken) return true
    this.#parts.push(line)
    this.#size += line.length
    if (this.#size >= this.#gather) this.#handOver()
    return true
  }

  #handOver(): void {
    if (this.#parts.length === 0 || this.#broken) return
    const text = this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join("")
    this.#parts = []
    this.#size = 0
    this.#out.write(text)
  }

  /** Hands what is gathered to SonicBoom, to be written at once; `done` when it has taken it. */
  flush(done?: (err?: Error) => void): void {
    this.#handOver()
    if (this.#broken) return done?.()
    this.#out.flush(done ?? (() => undefined))
  }

  /** Writes out everything, now (the process is exiting). */
  flushSync(): void {
    this.#handOver()
    if (this.#broken) return
    try {
      this.#out.flushSync()
    } catch {
      // not ready yet, or the reader is gone: nothing more can be written
    }
  }

  /** Writes out what is gathered and closes the destination (and its file descriptor); `closed` once it has. */
  end(closed?: () => void): void {
    clearInterval(this.#timer)
    this.#handOver()
    open.delete(this)
    if (closed !== undefined) this.#out.once("close", closed)
    this.#out.end()
  }
}
