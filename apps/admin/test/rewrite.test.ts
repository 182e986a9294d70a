/** `npm run admin -- rewrite apply FILE.jsonl [--dry-run]` as a child process on PostgreSQL. */
import pg from "pg"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTempDir, createTestDatabase } from "../../../test/support/databases.ts"
import { nodeBin, repoRoot, runNode } from "../../../test/support/processes.ts"

const ADMIN = "apps/admin/main.ts"
const PARTNER = '<a href="https://partner.test/offer" data-service-protected="backlink">partner offer</a>'

const fixture = {
  accounts: [
    {
      id: "acc_rw",
      email: "rw@example.test",
      password: "rw-password",
      sites: [
        {
          id: "site_rw",
          name: "Rewrites",
          url: "https://rw.test",
          articles: [
            { id: "art_rw1", title: "Protected", url: "https://rw.test/1", status: "published", body: `<p>Read the ${PARTNER}.</p>` },
            { id: "art_rw2", title: "Plain", url: "https://rw.test/2", status: "published", body: "<p>plain words</p>" },
            { id: "art_rw3", title: "Third", url: "https://rw.test/3", status: "draft", body: "<p>third</p>" },
          ],
        },
      ],
    },
    {
      id: "acc_rw_other",
      email: "other@example.test",
      password: "other-password",
      sites: [{ id: "site_rw_other", name: "Other", url: "https://other.test", articles: [{ id: "art_rw_other", title: "Theirs", url: "https://other.test/1", status: "published", body: "<p>theirs</p>" }] }],
    },
  ],
}

const line = (o: Record<string, unknown>) => JSON.stringify(o)

/** Good lines on two accounts, and one line of each kind of refusal. */
const batch = [
  line({ rewrite_id: "rw-good-1", article_id: "art_rw1", body: `<h2>New</h2><p>Now read the ${PARTNER} first.</p><script>x()</script>`, reason: "Refresh" }),
  line({ rewrite_id: "rw-bad-protected", article_id: "art_rw1", body: "<p>The partner link is gone.</p>" }),
  line({ rewrite_id: "rw-good-2", article_id: "art_rw2", title: "Plain, rewritten" }),
  line({ rewrite_id: "rw-bad-stale", article_id: "art_rw3", title: "Stale", if_revision: 5 }),
  "",
  line({ rewrite_id: "rw-bad-missing", article_id: "art_missing", title: "Nobody" }),
  '{"rewrite_id": "rw-bad-json", ',
  line({ rewrite_id: "rw-good-3", article_id: "art_rw_other", title: "Theirs, rewritten" }),
].join("\n")

// Each case runs the command line as a child process (several seconds each on a busy machine).
describe("admin rewrite apply on PostgreSQL", { timeout: 120_000 }, () => {
  /** Runs `command` under a pseudo-terminal (`script`), as a person at one would: its exit code and all it printed. */
  const onTerminal = (command: string) =>
    new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
      let text = ""
      child.stdout.on("data", (d) => (text += d))
      child.stderr.on("data", (d) => (text += d))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, text }))
    })
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const temp = createTempDir("cs-rewrite-")
  let env: Record<string, string>
  let client: pg.Client
  const admin = (...args: Array<string>) => runNode(ADMIN, args, env)
  const file = (name: string, text: string) => {
    const path = join(temp.dir, name)
    writeFileSync(path, `${text}\n`)
    return path
  }
  const rows = async (sql: string, params: Array<unknown> = []) => (await client.query(sql, params)).rows
  const count = async (sql: string, params: Array<unknown> = []) => Number((await rows(sql, params))[0].n)
  /** The result lines, each with its indented continuation lines (offending blocks). */
  const resultLines = (stdout: string) =>
    stdout
      .split("\n")
      .reduce<Array<string>>((acc, l) => (l.startsWith("    ") && acc.length > 0 ? [...acc.slice(0, -1), `${acc.at(-1)}\n${l}`] : [...acc, l]), [])
      .filter((l) => l.startsWith("line "))

  beforeAll(async () => {
    database = await createTestDatabase()
    env = { DATABASE_URL: database.url }
    const imported = await admin("import", file("fixture.json", JSON.stringify(fixture)))
    expect(imported.code).toBe(0)
    client = new pg.Client({ connectionString: database.url })
    await client.connect()
  })
  afterAll(async () => {
    await client?.end()
    await database?.drop()
    temp.remove()
  })

  it("should check every line in a dry run, report what would happen, and write nothing", async () => {
    const before = await rows("select (select count(*) from revisions) r, (select count(*) from activity) a, (select count(*) from applied_rewrites) w")
    const out = await admin("rewrite", "apply", file("batch.jsonl", batch), "--dry-run")
    expect(out.stderr).toBe("")
    expect(out.code).toBe(1)
    expect(resultLines(out.stdout)).toEqual([
      "line 1  rw-good-1  art_rw1  would apply: a new revision",
      expect.stringMatching(/^line 2  rw-bad-protected  art_rw1  refused: protected_link_changed: .*\n    removed "partner offer" \(https:\/\/partner\.test\/offer\)$/),
      "line 3  rw-good-2  art_rw2  would apply: a new revision",
      expect.stringMatching(/^line 4  rw-bad-stale  art_rw3  refused: precondition_failed: /),
      "line 6  rw-bad-missing  art_missing  refused: not_found: No article with id 'art_missing'.",
      expect.stringMatching(/^line 7  -  -  refused: invalid_request: The line is not valid JSON/),
      "line 8  rw-good-3  art_rw_other  would apply: a new revision",
    ])
    expect(out.stdout).toContain("nothing written: 7 lines, 3 would apply, 0 already applied, 4 refused.")
    const after = await rows("select (select count(*) from revisions) r, (select count(*) from activity) a, (select count(*) from applied_rewrites) w")
    expect(after).toEqual(before)
  })

  it("should apply the good lines as rewrite revisions, refuse the bad ones alone, and leave the daily edit limit untouched", async () => {
    // The account's edits for today are used up: the rewrite job must still apply and count nothing.
    // (Today's and tomorrow's, UTC: the command reads its own clock, and a midnight may fall between.)
    const today = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    for (const day of [today, tomorrow]) await client.query("insert into edit_counters (account_id, day, count) values ('acc_rw', $1, 200)", [day])
    const out = await admin("rewrite", "apply", join(temp.dir, "batch.jsonl"))
    expect(out.stderr).toBe("")
    expect(out.code).toBe(1)
    expect(resultLines(out.stdout).map((l) => l.split("\n")[0])).toEqual([
      "line 1  rw-good-1  art_rw1  applied: revision 2",
      expect.stringMatching(/^line 2  rw-bad-protected  art_rw1  refused: protected_link_changed: /),
      "line 3  rw-good-2  art_rw2  applied: revision 2",
      expect.stringMatching(/^line 4  rw-bad-stale  art_rw3  refused: precondition_failed/),
      "line 6  rw-bad-missing  art_missing  refused: not_found: No article with id 'art_missing'.",
      expect.stringMatching(/^line 7  -  -  refused: invalid_request/),
      "line 8  rw-good-3  art_rw_other  applied: revision 2",
    ])
    expect(out.stdout).toContain(": 7 lines, 3 applied (0 without a change), 0 already applied, 4 refused.")

    const revisions = await rows("select article_id, number, origin, actor, reason, body from revisions where origin = 'rewrite' order by article_id")
    expect(revisions.map((r) => [r.article_id, r.number, r.origin, r.actor])).toEqual(
      ["art_rw1", "art_rw2", "art_rw_other"].map((id) => [id, 2, "rewrite", { type: "platform", id: "rewrite", name: "Rewrite job" }]),
    )
    expect(revisions[0].reason).toBe("Refresh")
    expect(revisions[0].body).not.toContain("script")
    expect(revisions[0].body).toContain(PARTNER)
    expect((await rows("select revision, title from articles where id = 'art_rw3'"))[0]).toEqual({ revision: 1, title: "Third" })

    expect(await rows("select account_id, day, count from edit_counters order by account_id, day")).toEqual([
      { account_id: "acc_rw", day: today, count: 200 },
      { account_id: "acc_rw", day: tomorrow, count: 200 },
    ])

    const entries = await rows(
      "select account_id, channel, action, site_id, article_id, status, error_code, actor from activity where channel = 'platform' order by article_id, status",
    )
    expect(entries.map(({ actor: _, ...e }) => e)).toEqual([
      { account_id: "acc_rw", channel: "platform", action: "rewrite", site_id: "site_rw", article_id: "art_rw1", status: "error", error_code: "protected_link_changed" },
      { account_id: "acc_rw", channel: "platform", action: "rewrite", site_id: "site_rw", article_id: "art_rw1", status: "ok", error_code: null },
      { account_id: "acc_rw", channel: "platform", action: "rewrite", site_id: "site_rw", article_id: "art_rw2", status: "ok", error_code: null },
      { account_id: "acc_rw", channel: "platform", action: "rewrite", site_id: "site_rw", article_id: "art_rw3", status: "error", error_code: "precondition_failed" },
      { account_id: "acc_rw_other", channel: "platform", action: "rewrite", site_id: "site_rw_other", article_id: "art_rw_other", status: "ok", error_code: null },
    ])
    expect(entries.every((e) => e.actor.type === "platform" && e.actor.id === "rewrite")).toBe(true)
  })

  it("should apply nothing twice: the same file again reports the applied lines as already applied", async () => {
    const before = await count("select count(*) n from revisions")
    const out = await admin("rewrite", "apply", join(temp.dir, "batch.jsonl"))
    expect(out.code).toBe(1)
    const lines = resultLines(out.stdout)
    expect(lines.filter((l) => l.includes("already applied: revision 2")).map((l) => l.split("  ")[1])).toEqual(["rw-good-1", "rw-good-2", "rw-good-3"])
    expect(lines.filter((l) => l.includes("refused:"))).toHaveLength(4)
    expect(out.stdout).toContain(": 7 lines, 0 applied (0 without a change), 3 already applied, 4 refused.")
    expect(await count("select count(*) n from revisions")).toBe(before)
    expect(await rows("select rewrite_id, article_id, revision from applied_rewrites order by rewrite_id")).toEqual([
      { rewrite_id: "rw-good-1", article_id: "art_rw1", revision: 2 },
      { rewrite_id: "rw-good-2", article_id: "art_rw2", revision: 2 },
      { rewrite_id: "rw-good-3", article_id: "art_rw_other", revision: 2 },
    ])
  })

  it("should exit 0 when every line applies, quietly when not on a terminal", async () => {
    const out = await admin(
      "rewrite",
      "apply",
      file("clean.jsonl", [line({ rewrite_id: "rw-clean-1", article_id: "art_rw3", title: "Third, rewritten", if_revision: 1 }), line({ rewrite_id: "rw-clean-2", article_id: "art_rw2", title: "Plain, rewritten" })].join("\n")),
    )
    expect(out.stderr).toBe("")
    expect(out.code).toBe(0)
    expect(resultLines(out.stdout)).toEqual(["line 1  rw-clean-1  art_rw3  applied: revision 2", "line 2  rw-clean-2  art_rw2  applied: no change (the article already reads so)"])
    expect(out.stdout).not.toContain("|")
  })

  it("should show a progress bar on a terminal", async () => {
    // `script` (util-linux, in every Debian base system) runs the command on a pseudo-terminal.
    const path = file("tty.jsonl", [line({ rewrite_id: "rw-tty-1", article_id: "art_rw1", title: "On a terminal" }), line({ rewrite_id: "rw-tty-2", article_id: "art_missing", title: "x" })].join("\n"))
    const command = [nodeBin, ADMIN, "rewrite", "apply", path].map((a) => `'${a}'`).join(" ")
    const out = await onTerminal(command)
    expect(out.code).toBe(1)
    expect(out.text).toMatch(/rewrite \|[█░]+\| 2\/2 lines \| 1 refused/)
    expect(out.text).toContain("line 1  rw-tty-1  art_rw1  applied: revision 3")
    expect(out.text).toContain("line 2  rw-tty-2  art_missing  refused: not_found")
  })

  it("should apply a batch piped in on a terminal, not use it up counting its lines for the bar", async () => {
    const path = file("piped.jsonl", [line({ rewrite_id: "rw-pipe-1", article_id: "art_rw3", title: "Piped in" }), line({ rewrite_id: "rw-pipe-2", article_id: "art_missing", title: "x" })].join("\n"))
    const command = `cat '${path}' | ${[nodeBin, ADMIN, "rewrite", "apply", "/dev/stdin"].map((a) => `'${a}'`).join(" ")}`
    const out = await onTerminal(command)
    expect(out.text).toContain("line 1  rw-pipe-1  art_rw3  applied: revision")
    expect(out.text).toContain("line 2  rw-pipe-2  art_missing  refused: not_found")
    expect(out.text).toContain("2 lines, 1 applied (0 without a change), 0 already applied, 1 refused.")
    expect(out.code).toBe(1)
  })

  it("should refuse a missing file and a stray --dry-run as usage errors", async () => {
    const missing = await admin("rewrite", "apply", join(temp.dir, "nope.jsonl"))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("Cannot read")
    const none = await admin("rewrite", "apply")
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("rewrite apply takes exactly one FILE.jsonl")
    const stray = await admin("migrate", "--dry-run")
    expect(stray.code).toBe(1)
    expect(stray.stderr).toContain("--dry-run is an option of rewrite apply only")
  })

  it("should escape what it prints from the file and refuse a line that is not UTF-8, one result line each", async () => {
    const forged = "rw-esc-1\nline 9  rw-fake  art_rw2  applied: revision 99"
    const text = [
      line({ rewrite_id: forged, article_id: "art_missing", title: "x" }),
      line({ rewrite_id: "rw-esc-2\u001b[31m\u202e", article_id: "art_\u001b]0;pwned\u0007", title: "x" }),
    ].join("\n")
    const path = join(temp.dir, "hostile.jsonl")
    // the third line holds bytes that are not UTF-8 (0xff, a lone continuation byte)
    writeFileSync(path, Buffer.concat([Buffer.from(`${text}\n`), Buffer.from('{"rewrite_id": "rw-esc-3", "article_id": "art_rw2", "title": "a'), Buffer.from([0xff, 0x80]), Buffer.from('"}\n')]))
    const out = await admin("rewrite", "apply", path, "--dry-run")
    expect(out.code).toBe(1)
    // nothing from the file reaches the terminal as a control character
    expect(out.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(out.stdout).not.toContain("\uFFFD")
    const results = out.stdout.split("\n").filter((l) => l.startsWith("line "))
    expect(results).toEqual([
      expect.stringMatching(/^line 1  rw-esc-1\\u000aline 9  rw-fake  art_rw2  applied: revision 99  art_missing  refused: invalid_request: /),
      expect.stringMatching(/^line 2  rw-esc-2\\u001b\[31m\\u202e  art_\\u001b\]0;pwned\\u0007  refused: /),
      "line 3  -  -  refused: invalid_request: The line is not valid UTF-8.",
    ])
    expect(out.stdout).toContain("nothing written: 3 lines, 0 would apply, 0 already applied, 3 refused.")
  })
  it("should refuse a line longer than any line can be without keeping it, and check the lines around it", async () => {
    const path = join(temp.dir, "oversized.jsonl")
    const { MAX_REWRITE_LINE_BYTES } = await import("@content-site/core")
    // a line of 8 MiB and one byte, in the middle of a batch (its end falls inside a read chunk), and another ending the file without a newline
    const long = `{"rewrite_id": "rw-long", "article_id": "art_rw2", "body": "${"a".repeat(MAX_REWRITE_LINE_BYTES)}"}`
    writeFileSync(path, `${line({ rewrite_id: "rw-long-before", article_id: "art_rw2", title: "Before" })}\n${long}\n${line({ rewrite_id: "rw-long-after", article_id: "art_rw2", title: "After" })}\n${long}`)
    const out = await admin("rewrite", "apply", path, "--dry-run")
    expect(out.code).toBe(1)
    const results = out.stdout.split("\n").filter((l) => l.startsWith("line "))
    expect(results).toEqual([
      "line 1  rw-long-before  art_rw2  would apply: a new revision",
      `line 2  -  -  refused: invalid_request: The line is ${Buffer.byteLength(long)} bytes, longer than any rewrite line can be (${MAX_REWRITE_LINE_BYTES} bytes: a body is at most 1048576 bytes); it was not read.`,
      "line 3  rw-long-after  art_rw2  would apply: a new revision",
      `line 4  -  -  refused: invalid_request: The line is ${Buffer.byteLength(long)} bytes, longer than any rewrite line can be (${MAX_REWRITE_LINE_BYTES} bytes: a body is at most 1048576 bytes); it was not read.`,
    ])
    expect(out.stdout).toContain("nothing written: 4 lines, 2 would apply, 0 already applied, 2 refused.")
  })
})
