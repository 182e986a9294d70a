/**
 * An exclusive lock on the embedded database's directory: a `LOCK` file holding the owner's pid,
 * created with O_EXCL. A second process refuses to open the directory; a lock whose process is gone
 * (killed, crashed) is stale and taken over.
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

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes the lock on `dir` (creating it) and returns its release function. */
export const lockDataDir = (dir: string): (() => void) => {
  const abs = resolve(dir)
  mkdirSync(abs, { recursive: true })
  const file = join(abs, "LOCK")
  if (held.has(abs)) throw new DataDirLocked(abs, process.pid)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx" })
      held.add(abs)
      let released = false
      const release = () => {
        if (released) return
        released = true
        held.delete(abs)
        process.off("exit", release)
        try {
          if (readFileSync(file, "utf8").trim() === String(process.pid)) rmSync(file, { force: true })
        } catch {
          // gone already
        }
      }
      process.on("exit", release)
      return release
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      let pid = NaN
      try {
        pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10)
      } catch {
        continue // removed meanwhile: try again
      }
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) throw new DataDirLocked(abs, pid)
      // stale: its process is gone (or it is our own leftover from a crash of an earlier run)
      rmSync(file, { force: true })
    }
  }
  throw new Error(`Could not take the lock on ${abs}`)
}
