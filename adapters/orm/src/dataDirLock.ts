/**
 * An exclusive lock on the embedded database's directory: a `LOCK` file holding the owner's pid and,
 * on Linux, the process's start time (`/proc/<pid>/stat`), created with O_EXCL. A second process
 * refuses to open the directory; a lock whose process is gone (killed, crashed) is stale and taken
 * over, also when its pid now belongs to another process (pids are reused, often the same low ones
 * in a restarted container): the start time tells them apart.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

/** Directories this process holds open. */
const held = new Set<string>()

/** The directory is in use by another live process (or by this one already). */
export class DataDirLocked extends Error {
  readonly pid: number
  constructor(dir: string, pid: number) {
    super(
      `The data directory ${dir} is in use by process ${pid}${pid === process.pid ? " (this process)" : ""}. ` +
        `Only one process may open the embedded database at a time: stop the other one, or set DATA_DIR ` +
        `(or DATABASE_URL) differently.`,
    )
    this.name = "DataDirLocked"
    this.pid = pid
  }
}

/** The directory cannot be made or written (a file on its path, no permission, a read-only file system). */
export class DataDirUnusable extends Error {
  constructor(dir: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code
    const reason =
      code === "ENOTDIR" || code === "EEXIST"
        ? "it, or a folder on its path, is a file"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied"
          : code === "EROFS"
            ? "the file system is read-only"
            : (cause as Error).message
    super(`The data directory ${dir} (DATA_DIR) cannot be used: ${reason}. Set DATA_DIR to a directory this process may write, or set DATABASE_URL.`)
    this.name = "DataDirUnusable"
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** When a process started (clock ticks since boot, field 22 of /proc/<pid>/stat); undefined without /proc. */
export const processStartTime = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
  } catch {
    return undefined
  }
}

/** Whether a process still runs: the pid is alive and, when both are known, started at `startedAt`. */
export const ownerAlive = (pid: number, startedAt: string | undefined): boolean => {
  if (!alive(pid)) return false
  const now = startedAt === undefined ? undefined : processStartTime(pid)
  return now === undefined || now === startedAt
}

/** Takes the lock on `dir` (creating it) and returns its release function. */
export const lockDataDir = (dir: string): (() => void) => {
  const abs = resolve(dir)
  try {
    mkdirSync(abs, { recursive: true })
  } catch (e) {
    throw new DataDirUnusable(abs, e)
  }
  const file = join(abs, "LOCK")
  if (held.has(abs)) throw new DataDirLocked(abs, process.pid)
  const ownStart = processStartTime(process.pid)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}${ownStart === undefined ? "" : ` ${ownStart}`}\n`, { flag: "wx" })
      held.add(abs)
      let released = false
      const release = () => {
        if (released) return
        released = true
        held.delete(abs)
        process.off("exit", release)
        try {
          if (readFileSync(file, "utf8").trim().split(" ")[0] === String(process.pid)) rmSync(file, { force: true })
        } catch {
          // gone already
        }
      }
      process.on("exit", release)
      return release
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw new DataDirUnusable(abs, e)
      let owner: Array<string>
      try {
        owner = readFileSync(file, "utf8").trim().split(" ")
      } catch {
        continue // removed meanwhile: try again
      }
      const pid = Number.parseInt(owner[0] ?? "", 10)
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && ownerAlive(pid, owner[1])) throw new DataDirLocked(abs, pid)
      // stale: its process is gone, its pid was reused, or it is our own leftover from an earlier run
      rmSync(file, { force: true })
    }
  }
  throw new Error(`Could not take the lock on ${abs}`)
}
