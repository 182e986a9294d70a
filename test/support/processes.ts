/** Child Node processes for persistence tests, on the pinned Node 24 (TypeScript by type stripping). */
import { spawn, type ChildProcess } from "node:child_process"
import { dirname, join } from "node:path"
import { StringDecoder } from "node:string_decoder"
import { fileURLToPath } from "node:url"

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
export const nodeBin = join(repoRoot, "node_modules", ".bin", "node")

/** Starts `node script args...` in the repository root. */
export const spawnNode = (script: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): ChildProcess =>
  spawn(nodeBin, [script, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })

/** Runs a Node script to completion and returns its exit code and output. */
export const runNode = (script: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawnNode(script, args, env)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/**
 * Resolves with the first whole stdout line matching `pattern` (a line is whole once its line
 * break came: a chunk may end inside one, or inside a character of several bytes).
 */
export const waitForLine = (child: ChildProcess, pattern: RegExp) =>
  new Promise<string>((resolve, reject) => {
    const decoder = new StringDecoder("utf8")
    let partial = ""
    let errors = ""
    child.stderr!.on("data", (d) => (errors += d))
    const onData = (d: Buffer) => {
      const lines = (partial + decoder.write(d)).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) {
        if (pattern.test(line)) {
          child.stdout!.off("data", onData)
          resolve(line)
          return
        }
      }
    }
    child.stdout!.on("data", onData)
    child.on("exit", (code) => reject(new Error(`child exited (${code}) before printing ${pattern}: ${errors}`)))
  })
