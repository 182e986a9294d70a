/**
 * `rewrite apply FILE.jsonl [--dry-run]`: runs a batch of the platform's rewrite job through the
 * core (`makeRewriteBatch`), one line at a time, printing one result line per input line and a
 * summary; a progress bar on stderr when it is a terminal. Lines are read as bytes and must be
 * UTF-8 (a line that is not is refused, as an API body would be, never read with replacement
 * characters); everything printed that came from the file or the database is escaped
 * (`printable`), so a line cannot write to the terminal or forge a result line.
 */
import { MAX_REWRITE_LINE_BYTES, makeRewriteBatch, toProblem, type RewriteLineResult, type RewriteSummary } from "@content-site/core"
import cliProgress from "cli-progress"
import type { Effect } from "effect"
import { createReadStream, statSync } from "node:fs"
import { printable } from "./printable.ts"

/** The services one line of a batch needs. */
type BatchServices = Effect.Services<ReturnType<ReturnType<typeof makeRewriteBatch>["apply"]>>

/** Runs one effect of the batch (the admin's runtime); a defect rejects. */
export type RunEffect = <A>(effect: Effect.Effect<A, never, BatchServices>) => Promise<A>

/** Exit code of a batch: 0 every line applied (or would), 1 some line refused, 2 some line met a database outage. */
export type BatchExit = 0 | 1 | 2

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d
/** Whether a line's bytes are only ASCII white space (a blank line). */
const blank = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0x20 || b === 0x09 || b === CARRIAGE_RETURN || b === 0x0b || b === 0x0c)

/** A line of the file: its bytes, or, for a line longer than any line can be, only its length (its bytes were not kept). */
type FileLine = { readonly number: number; readonly bytes: Uint8Array } | { readonly number: number; readonly oversized: number }

/**
 * Every line of the file as bytes (without its CR LF or LF) with its number (from 1), blank lines
 * left out. A line past `MAX_REWRITE_LINE_BYTES` is not kept (memory stays bounded whatever the
 * file holds): it is answered by its length.
 */
async function* linesOf(file: string): AsyncGenerator<FileLine> {
  let number = 0
  // The start of the current line, as the chunks it spans (joined once, at its end: a line of
  // many chunks is copied once, not once a chunk), and how long it is so far.
  let rest: Array<Buffer> = []
  let length = 0
  const line = (bytes: Buffer) => (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.subarray(0, -1) : bytes)
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let data = chunk
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE)) {
      number += 1
      length += end
      if (length > MAX_REWRITE_LINE_BYTES) yield { number, oversized: length }
      else {
        const bytes = line(rest.length === 0 ? data.subarray(0, end) : Buffer.concat([...rest, data.subarray(0, end)]))
        if (!blank(bytes)) yield { number, bytes }
      }
      rest = []
      length = 0
      data = data.subarray(end + 1)
    }
    length += data.length
    if (length > MAX_REWRITE_LINE_BYTES) rest = []
    else if (data.length > 0) rest.push(Buffer.from(data))
  }
  if (length > MAX_REWRITE_LINE_BYTES) yield { number: number + 1, oversized: length }
  else if (rest.length > 0) {
    number += 1
    const bytes = line(Buffer.concat(rest))
    if (!blank(bytes)) yield { number, bytes }
  }
}

const countLines = async (file: string): Promise<number> => {
  let n = 0
  for await (const _ of linesOf(file)) n += 1
  return n
}

const quoted = (s: string | null) => (s === null ? "-" : printable(s))

/** One result line: where, which ids, and what became of it. */
export const describeResult = (fileLine: number, r: RewriteLineResult): string => {
  const where = `line ${fileLine}  ${quoted(r.rewrite_id)}  ${quoted(r.article_id)}  `
  const o = r.outcome
  switch (o.kind) {
    case "applied":
      return `${where}applied: revision ${o.revision}`
    case "unchanged":
      return `${where}applied: no change (the article already reads so)`
    case "already_applied":
      return `${where}already applied${o.revision === null ? " (no change)" : `: revision ${o.revision}`}`
    case "would_apply":
      return `${where}would apply${o.changed ? ": a new revision" : ": no change"}`
    case "refused": {
      const p = toProblem(o.error, "-", "")
      const blocks = (p.blocks ?? []).map((b) => `${b.kind} "${printable(b.text)}"${b.href ? ` (${printable(b.href)})` : ""}`)
      const fields = (p.errors ?? [])
        .filter((e) => !p.detail.includes(e.path) && !p.detail.includes(e.message))
        .map((e) => `${printable(e.path)}: ${printable(e.message)}`)
      // The job works across accounts: an unknown article is simply unknown.
      const detail = printable(o.error._tag === "NotFound" ? `No ${o.error.resource} with id '${o.error.id}'.` : p.detail)
      return `${where}refused: ${p.code}: ${detail}${[...blocks, ...fields].map((x) => `\n    ${x}`).join("")}`
    }
  }
}

const describeSummary = (file: string, s: RewriteSummary, dryRun: boolean): string =>
  dryRun
    ? `Dry run of ${printable(file)}, nothing written: ${s.lines} lines, ${s.would_apply} would apply, ${s.already_applied} already applied, ${s.refused} refused.`
    : `Rewrite batch ${printable(file)}: ${s.lines} lines, ${s.applied + s.unchanged} applied (${s.unchanged} without a change), ` +
      `${s.already_applied} already applied, ${s.refused} refused.`

/** Applies (or checks, with `dryRun`) every line of `file`; answers the exit code. */
export const rewriteApply = async (run: RunEffect, file: string, dryRun: boolean): Promise<BatchExit> => {
  const batch = makeRewriteBatch({ dryRun })
  // Progress only where a person watches: stderr on a terminal. Piped or redirected, it is quiet.
  const bars = process.stderr.isTTY
    ? new cliProgress.MultiBar(
        { format: "rewrite |{bar}| {value}/{total} lines | {refused} refused", hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : null
  // Only a regular file can be read twice: a pipe (`/dev/stdin`, `<(...)`) would be used up by the
  // count, so its bar's total is the lines read so far.
  const counted = statSync(file).isFile()
  const bar = bars?.create(counted ? await countLines(file) : 0, 0, { refused: 0 }) ?? null
  // With the bar on the same terminal, result lines are written above it, not through it.
  const print = (text: string) => (bars && process.stdout.isTTY ? bars.log(`${text}\n`) : console.log(text))
  let unavailable = false
  try {
    for await (const fileLine of linesOf(file)) {
      const { number } = fileLine
      const result = "oversized" in fileLine ? batch.refuseOversized(fileLine.oversized, number) : await run(batch.apply(fileLine.bytes, number))
      if (result.outcome.kind === "refused" && result.outcome.error._tag === "Unavailable") unavailable = true
      print(describeResult(number, result))
      if (!counted) bar?.setTotal(batch.summary().lines)
      bar?.increment(1, { refused: batch.summary().refused })
    }
  } finally {
    bars?.update()
    bars?.stop()
  }
  const summary = batch.summary()
  console.log(describeSummary(file, summary, dryRun))
  return unavailable ? 2 : summary.refused > 0 ? 1 : 0
}
