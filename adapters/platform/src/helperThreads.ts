/**
 * V8's helper threads below the event loop in the scheduler. Every isolate of the process (the
 * server's thread and the sanitiser pool's threads) hands its garbage collection's parallel and
 * concurrent work (scavenging, marking, sweeping) and its background compilation to the process's
 * one set of V8 helper threads (Node's platform workers, named `V8Worker`, four by default). The
 * pool's threads run at nice 10 (`htmlWorker.ts`), but the garbage of a 1 MiB body they parse was
 * collected at nice 0 beside the server's thread: in 4 s of one account restoring a 1 MiB revision
 * over and over, the helpers took 2.0 s of CPU, the sanitiser's thread 1.4 s and the server's
 * thread 0.9 s, on two cores (with a CPU profile running; docs/benchmarks.md). At nice 10 they yield to the event loop and the
 * database when the cores are short, and take any idle core as before. The server's own garbage
 * collection loses nothing it needs: where a helper is late, the thread that allocated does the
 * work itself, as V8 does on a machine with fewer cores.
 */
import { readdirSync, readFileSync } from "node:fs"
import { setPriority } from "node:os"

/**
 * The scheduler priority (nice) of the threads that work for the event loop: V8's helpers, the
 * sanitiser pool's threads and the span export thread.
 */
export const BELOW_EVENT_LOOP_NICE = 10

/** The scheduler priority (nice) of V8's helper threads: the sanitiser pool's own. */
export const V8_HELPERS_NICE = BELOW_EVENT_LOOP_NICE

/**
 * Sets the calling thread (a worker thread's own, not the process's) to nice `nice`; answers
 * whether it did. Linux keeps a nice value for each thread, and a thread's id is the first field
 * of /proc/thread-self/stat; lowering one's own priority needs no privilege. Elsewhere, or where
 * it is refused, false, and the thread runs as before.
 */
export const lowerThisThread = (nice: number = BELOW_EVENT_LOOP_NICE): boolean => {
  try {
    const tid = Number.parseInt(readFileSync("/proc/thread-self/stat", "utf8"), 10)
    if (!(tid > 0)) return false
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}

/**
 * Sets each of this process's V8 helper threads (`V8Worker`) to nice `V8_HELPERS_NICE`, and answers
 * how many it set. Linux keeps a nice value for each thread (`/proc/self/task` lists them, each
 * with its name in `comm`); lowering a thread of one's own process needs no privilege. One pass over
 * the process's threads (a few dozen). Elsewhere, or where refused: 0, and nothing changes.
 */
export const lowerV8HelperThreads = (): number => {
  let tasks: ReadonlyArray<string>
  try {
    tasks = readdirSync("/proc/self/task")
  } catch {
    return 0
  }
  let lowered = 0
  for (const tid of tasks) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== "V8Worker") continue
      setPriority(Number(tid), V8_HELPERS_NICE)
      lowered++
    } catch {
      // the thread ended meanwhile, or lowering was refused: it runs as before
    }
  }
  return lowered
}
