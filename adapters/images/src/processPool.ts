/**
 * A few child processes that run one job each at a time, and a job that outlives its time is
 * ended by killing its process (SIGKILL): the only way to stop native code that does not look
 * back (AVIF's decoder), and the way its memory is handed back at once. A killed or crashed
 * process is replaced by a new one for the next job. Node's own `child_process`, with
 * structured-clone messages so bytes travel as bytes.
 */
import { fork, type ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * What a job came to: the process's answer; the time ran out and the process was killed; or the
 * process ended by itself during the job (a crash of native code on its input, the OOM killer).
 */
export type JobOutcome<A> = { readonly answer: A } | { readonly killed: true } | { readonly ended: string }

export interface ProcessPool<I, A> {
  /** Runs `job` in a free process (waiting for one), killing it after `ms` of work. */
  readonly run: (job: I, ms: number) => Promise<JobOutcome<A>>
  /** Kills every process; later jobs are refused. */
  readonly close: () => void
}

/** A child's first message: its modules are loaded and it takes jobs. */
export const READY = "ready"

/**
 * A child's message on receiving a job, before its work: the job reached a living process. A
 * process that ended while idle, before this process heard of its end, never sends it, and its
 * job goes to another process instead of being reported as a crash under it.
 */
export const TAKEN = "taken"

/**
 * `script` sends `READY` once, then answers each job message with `TAKEN` at once and one
 * message (the answer) when done.
 */
export const processPool = <I, A>(script: URL, size: number): ProcessPool<I, A> => {
  const idle: Array<ChildProcess> = []
  const all = new Set<ChildProcess>()
  const waiting: Array<() => void> = []
  let busy = 0
  let closed = false

  const start = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const child = fork(fileURLToPath(script), [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] })
      all.add(child)
      child.once("exit", () => {
        all.delete(child)
        // An idle process that ended (the OOM killer, an operator) is not handed a job: it would
        // wait out the job's whole time for an answer. It is replaced like a killed one.
        const at = idle.indexOf(child)
        if (at !== -1) {
          idle.splice(at, 1)
          replace()
        }
      })
      // An idle process never keeps the server's process alive.
      child.unref()
      child.channel?.unref()
      child.once("message", (m) => (m === READY ? resolve(child) : reject(new Error("image process: unexpected first message"))))
      child.once("error", reject)
      child.once("exit", (code, signal) => reject(new Error(`image process ended before it was ready (${signal ?? code})`)))
    })

  const acquire = async (): Promise<void> => {
    if (busy < size) {
      busy++
      return
    }
    await new Promise<void>((resolve) => waiting.push(resolve))
  }
  const release = (): void => {
    const next = waiting.shift()
    if (next) next()
    else busy--
  }

  // A killed or crashed process is replaced at once, in the background: the next job (often
  // another account's, waiting for exactly this process) does not pay for starting one.
  const replace = (): void => {
    if (closed) return
    start().then(
      // Never more idle processes than the pool's size (a job may have started its own meanwhile).
      (child) => (closed || idle.length >= size ? child.kill("SIGKILL") : idle.push(child)),
      () => undefined,
    )
  }

  // One job handed to one process: its answer, its time ran out (the process killed), or the
  // process ended under it; `untaken` when it ended before it received the job.
  const give = (child: ChildProcess, job: I, ms: number): Promise<JobOutcome<A> | { readonly untaken: string }> =>
    new Promise((resolve) => {
      let taken = false
      let over = false
      // The job's one outcome: listeners off, the timer cleared, the process replaced unless idle again.
      const finish = (outcome: JobOutcome<A> | { readonly untaken: string }, idleAgain = false) => {
        if (over) return
        over = true
        clearTimeout(timer)
        child.off("message", onMessage)
        child.off("exit", onExit)
        child.off("disconnect", onGone)
        if (idleAgain) idle.push(child)
        else replace()
        resolve(outcome)
      }
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        finish({ killed: true })
      }, ms)
      const onMessage = (message: A | typeof TAKEN) => {
        if (message === TAKEN && !taken) {
          taken = true
          return
        }
        // (an answer read after its process's exit was heard: that process takes no other job)
        finish({ answer: message as A }, exit === undefined)
      }
      // The process's exit can be heard before the messages it sent last (its acknowledgement of
      // this job, then a crash): the outcome waits for both its exit and its channel's end, every
      // message read. (A channel that ends without an exit, or the reverse, leaves it to the timer.)
      let exit: string | undefined
      let gone = false
      const settle = () => {
        if (exit !== undefined && (gone || !child.connected)) finish(taken ? { ended: exit } : { untaken: exit })
      }
      const onGone = () => {
        gone = true
        settle()
      }
      const onExit = (code: number | null, signal: string | null) => {
        exit = String(signal ?? code)
        settle()
      }
      child.on("message", onMessage)
      child.on("exit", onExit)
      child.once("disconnect", onGone)
      child.send(job as never)
    })

  const run = async (job: I, ms: number): Promise<JobOutcome<A>> => {
    if (closed) throw new Error("image process pool is closed")
    await acquire()
    try {
      // A process that ended while idle (the OOM killer, an operator) may still be in the idle
      // list: its exit is heard only when the event loop turns. A job it never received is given
      // to the next process: each process the pool has now at most once, then one started for it.
      const most = all.size + 1
      for (let tries = 1; ; tries++) {
        const child = idle.pop() ?? (await start())
        // One process kept ready while the pool is busy: the next job (another account's, while
        // this one may run for its whole budget) does not wait for a process to start.
        if (idle.length === 0) replace()
        const outcome = await give(child, job, ms)
        if (!("untaken" in outcome)) return outcome
        if (tries >= most) return { ended: outcome.untaken }
      }
    } finally {
      release()
    }
  }

  return {
    run,
    close: () => {
      closed = true
      for (const child of all) child.kill("SIGKILL")
      idle.length = 0
    },
  }
}
