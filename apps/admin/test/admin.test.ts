import pg from "pg"
import { createHash } from "node:crypto"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTempDir, createTestDatabase } from "../../../test/support/databases.ts"
import { spawnSync } from "node:child_process"
import { nodeBin, repoRoot, runNode } from "../../../test/support/processes.ts"

const ADMIN = "apps/admin/main.ts"

const goodFile = {
  accounts: [
    {
      id: "acc_cli",
      email: "cli@example.test",
      password: "cli-password",
      api_keys: [{ id: "key_cli", name: "ci", key: "cs_cliknownplaintextkey0123456789abcdef", scope: "write" }],
      sites: [
        {
          id: "site_cli",
          name: "CLI site",
          url: "https://cli.test",
          articles: [{ id: "art_cli", title: "Hello", url: "https://cli.test/hello", status: "published", published_at: "2026-10-03T09:00:00Z", body: "<p>Hello world</p>" }],
          backlinks: [{ id: "bl_cli", date_acquired: "2026-10-05", source_domain: "news.test", source_url: "https://news.test/p", target_url: "https://cli.test/hello", anchor_text: "hello", anchor_type: "exact", category: "industry" }],
        },
      ],
    },
  ],
}

/** The import file the contract shows, verbatim (its titles and texts are "..."; its password, "secret"). */
const contractExample = `{ "accounts": [ {
    "id": "acc_1", "email": "owner@example.com", "password": "secret", "name": "Owner",
    "api_keys": [ { "id": "key_1", "name": "ci", "key": "cs_test_known_plaintext", "scope": "write" } ],
    "sites": [ {
      "id": "site_1", "name": "Example", "url": "https://example.com",
      "articles": [ { "id": "art_1", "title": "...", "url": "https://example.com/a", "status": "published",
                      "published_at": "2026-10-03T09:00:00Z", "target keyword": "...",
                      "body": "<p>... <a href=\\"https://x.test\\" data-service-protected=\\"backlink\\">x</a></p>",
                      "featured image": { "url": "https://example.com/i.jpg", "alt": "..." } } ],
      "backlinks": [ { "id": "bl_1", "date_acquired": "2026-10-05", "source_domain": "news.test",
                       "source_url": "https://news.test/p", "target_url": "https://example.com/a",
                       "anchor_text": "...", "anchor_type": "exact", "category": "industry" } ] } ] } ] }`

const badFile = {
  accounts: [
    {
      id: "acc_bad",
      email: "bad@example.test",
      password: "bad-password",
      sites: [
        {
          id: "site_bad",
          name: "Bad",
          url: "https://bad.test",
          articles: [
            { id: "art_ok", title: "Fine", url: "https://bad.test/fine", status: "published", body: "<p>ok</p>" },
            { id: "art_bad", title: "Broken", url: "not a url", status: "published", body: "<p>x</p>" },
          ],
        },
      ],
    },
  ],
}

// Each case starts Node processes or opens a database: on a shared, loaded 2-core machine (CI is one)
// that alone has taken 20 s, so a case gets 120 s. A wait for work to finish, not a speed check.
describe("admin command line on PostgreSQL", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const temp = createTempDir("cs-admin-")
  let env: Record<string, string>
  const admin = (...args: Array<string>) => runNode(ADMIN, args, env)
  const firstRow = async (sql: string) => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      return (await client.query(sql)).rows[0]
    } finally {
      await client.end()
    }
  }
  const count = async (table: string) => (await firstRow(`select count(*)::int as n from ${table}`)).n as number

  beforeAll(async () => {
    database = await createTestDatabase()
    env = { DATABASE_URL: database.url }
    writeFileSync(join(temp.dir, "good.json"), JSON.stringify(goodFile))
    writeFileSync(join(temp.dir, "bad.json"), JSON.stringify(badFile))
    writeFileSync(join(temp.dir, "broken.json"), "{ not json")
  })
  afterAll(async () => {
    await database?.drop()
    temp.remove()
  })

  it("should refuse an invalid import file before touching the database: no migration, no embedded database made", async () => {
    // (first: the database is still empty, as a new deployment's is)
    const tables = async () => (await firstRow(`select count(*)::int as n from information_schema.tables where table_schema = 'public'`)).n as number
    const longAnchor = structuredClone(goodFile)
    longAnchor.accounts[0]!.sites[0]!.backlinks[0]!.anchor_text = "a".repeat(501)
    const badBody = structuredClone(goodFile)
    badBody.accounts[0]!.sites[0]!.articles[0]!.body = "<p>" + "x".repeat(1024 * 1024) + "</p>"
    for (const [file, path] of [[badFile, "accounts/0/sites/0/articles/1/url"], [longAnchor, "accounts/0/sites/0/backlinks/0/anchor_text"], [badBody, "accounts/0/sites/0/articles/0/body"]] as const) {
      writeFileSync(join(temp.dir, "refused.json"), JSON.stringify(file))
      const out = await admin("import", join(temp.dir, "refused.json"))
      expect(out.code).toBe(1)
      expect(out.stderr).toContain(path)
      expect(out.stderr).not.toContain("migrations")
      expect(await tables()).toBe(0)
      const dataDir = join(temp.dir, "never-made")
      const embedded = await runNode(ADMIN, ["import", join(temp.dir, "refused.json")], { DATA_DIR: dataDir, DATABASE_URL: "" })
      expect(embedded.code).toBe(1)
      expect(embedded.stderr).toContain(path)
      expect(existsSync(dataDir)).toBe(false)
    }
  })

  it("should migrate, saying what the database did on stderr and only the answer on stdout", async () => {
    const out = await admin("migrate")
    // the storage's own events are not the command's answer: `KEY=$(... key create ...)` after an upgrade catches only the key
    expect(out.stderr).toMatch(/^database: applied \d+ migrations\n$/)
    expect(out.code).toBe(0)
    expect(out.stdout).toBe("The PostgreSQL database schema is up to date.\n")
  })

  it("should refuse a bad import file naming the offending entry's JSON path and import nothing", async () => {
    const out = await admin("import", join(temp.dir, "bad.json"))
    expect(out.code).toBe(1)
    expect(out.stderr).toContain("accounts/0/sites/0/articles/1/url")
    expect(await count("accounts")).toBe(0)
    expect(await count("articles")).toBe(0)
    const broken = await admin("import", join(temp.dir, "broken.json"))
    expect(broken.code).toBe(1)
    expect(broken.stderr).toContain("not valid JSON")
  })

  it("should refuse an import file that is not UTF-8, as an API body or a rewrite line is, never storing replacement characters", async () => {
    const file = join(temp.dir, "latin1.json")
    const json = JSON.stringify({ accounts: [{ email: "latin@example.com", password: "pw-latin-1", name: "Ren\u00e9" }] })
    // "René" written in Latin-1: the byte E9 alone is not UTF-8
    writeFileSync(file, Buffer.from(json, "latin1"))
    const out = await admin("import", file)
    expect(out.code).toBe(1)
    expect(out.stderr).toContain("not valid UTF-8")
    expect(await count("accounts")).toBe(0)
  })

  it("should import a file once and change nothing when it is imported again", async () => {
    const first = await admin("import", join(temp.dir, "good.json"))
    expect(first.code).toBe(0)
    expect(first.stdout).toContain("created 1 accounts, 1 API keys, 1 sites, 1 articles, 1 backlinks")
    const second = await admin("import", join(temp.dir, "good.json"))
    expect(second.code).toBe(0)
    expect(second.stdout).toContain("created 0 accounts, 0 API keys, 0 sites, 0 articles, 0 backlinks; 5 already present")
    expect(await count("revisions")).toBe(1)
  })

  it("should import the contract's own example file as it is written, its known key stored as its hash", async () => {
    const file = join(temp.dir, "contract-example.json")
    writeFileSync(file, contractExample)
    const out = await admin("import", file)
    expect(out.stderr).toBe("")
    expect(out.code).toBe(0)
    expect(out.stdout).toContain("created 1 accounts, 1 API keys, 1 sites, 1 articles, 1 backlinks")
    const key = await firstRow("select key_hash from api_keys where id = 'key_1'")
    expect(key.key_hash).toBe(createHash("sha256").update("cs_test_known_plaintext").digest("hex"))
  })

  it("should show a key the import made (the file set no plaintext) once, on stdout, and not again on a second import", async () => {
    const file = join(temp.dir, "made-key.json")
    writeFileSync(
      file,
      JSON.stringify({ accounts: [{ id: "acc_made_key", email: "Made@Example.test", password: "long-enough", api_keys: [{ id: "key_made", name: "reports", scope: "read-only" }] }] }),
    )
    const first = await admin("import", file)
    expect(first.code).toBe(0)
    const shown = /^Read-only API key key_made for made@example\.test, named “reports”, shown only once: (cs_[A-Za-z0-9_]+)$/m.exec(first.stdout)
    expect(shown).not.toBeNull()
    // the key shown is the one stored (by its hash)
    const row = await firstRow("select key_hash from api_keys where id = 'key_made'")
    expect(row?.key_hash).toBe(createHash("sha256").update(shown![1]!).digest("hex"))
    const second = await admin("import", file)
    expect(second.code).toBe(0)
    expect(second.stdout).not.toContain("shown only once")
  })

  it("should create an account, refuse a duplicate, create a key shown once and revoke it", async () => {
    const created = await admin("account", "create", "--email", "New@Example.test", "--password", "long-enough", "--name", "New")
    expect(created.code).toBe(0)
    expect(created.stdout).toContain("new@example.test")
    const duplicate = await admin("account", "create", "--email", "new@example.test", "--password", "long-enough")
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toContain("exists already")

    const key = await admin("key", "create", "--account", "new@example.test", "--read-only", "--name", "reports")
    expect(key.code).toBe(0)
    expect(key.stdout.trim()).toMatch(/^cs_[A-Za-z0-9]{32,}$/)
    const keyId = /API key (\S+) for/.exec(key.stderr)?.[1]
    expect(keyId).toBeDefined()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const row = (await client.query("select * from api_keys where id = $1", [keyId])).rows[0]
      expect(row.scope).toBe("read-only")
      // only a hash: no part of the secret is kept (not even its first characters)
      expect(JSON.stringify(row)).not.toContain(key.stdout.trim().slice(3, 9))
      expect(row.revoked_at).toBeNull()
      const revoked = await admin("key", "revoke", keyId!)
      expect(revoked.code).toBe(0)
      expect(revoked.stdout).toContain(`Revoked API key ${keyId}.`)
      const at = (await client.query("select revoked_at from api_keys where id = $1", [keyId])).rows[0].revoked_at as Date
      expect(at).not.toBeNull()
      // revoked again: said so, the first revocation's time kept
      const again = await admin("key", "revoke", keyId!)
      expect(again.code).toBe(0)
      expect(again.stdout).toContain(`API key ${keyId} was revoked already, at ${at.toISOString().slice(0, 19)}`)
      expect((await client.query("select revoked_at from api_keys where id = $1", [keyId])).rows[0].revoked_at).toEqual(at)
    } finally {
      await client.end()
    }
    expect((await admin("key", "revoke", "key_missing")).code).toBe(1)
    expect((await admin("key", "create", "--account", "nobody@example.test")).code).toBe(1)
  })

  it("should log a key the operator creates or revokes in its account's activity, as the platform's administrator, once", async () => {
    expect((await admin("account", "create", "--email", "logged@example.test", "--password", "long-enough")).code).toBe(0)
    const accountId = (await firstRow("select id from accounts where email = 'logged@example.test'")).id as string
    const key = await admin("key", "create", "--account", "logged@example.test", "--name", "deploy")
    expect(key.code).toBe(0)
    const keyId = /API key (\S+) for/.exec(key.stderr)?.[1]
    expect(keyId).toBeDefined()
    expect((await admin("key", "revoke", keyId!)).code).toBe(0)
    // revoked again: nothing changed, so no second entry
    expect((await admin("key", "revoke", keyId!)).code).toBe(0)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const entries = (await client.query(
        "select account_id, channel, actor, action, status, error_code, site_id, article_id, request_id from activity where account_id = $1 order by at, action",
        [accountId],
      )).rows
      const admin = { type: "platform", id: "admin", name: "Administrator" }
      expect(entries.map(({ request_id: _, ...e }) => e)).toEqual([
        { account_id: accountId, channel: "platform", actor: admin, action: "key create “deploy”", status: "ok", error_code: null, site_id: null, article_id: null },
        { account_id: accountId, channel: "platform", actor: admin, action: "key revoke “deploy”", status: "ok", error_code: null, site_id: null, article_id: null },
      ])
      expect(new Set(entries.map((e) => e.request_id)).size).toBe(2)
    } finally {
      await client.end()
    }
  })

  it("should refuse an import whose account's email another account has, or that repeats an id, writing nothing (no key or site of an account that was not created)", async () => {
    const before = [await count("accounts"), await count("api_keys"), await count("sites"), await count("articles")]
    const taken = {
      accounts: [
        {
          id: "acc_other",
          email: "NEW@example.test",
          password: "other-password",
          api_keys: [{ id: "key_other", name: "k", key: "cs_otherknownplaintextkey0123456789abcd", scope: "write" }],
          sites: [{ id: "site_other", name: "Other", url: "https://other.test", articles: [{ id: "art_other", title: "O", url: "https://other.test/o", status: "published", body: "<p>o</p>" }] }],
        },
      ],
    }
    writeFileSync(join(temp.dir, "taken.json"), JSON.stringify(taken))
    const out = await admin("import", join(temp.dir, "taken.json"))
    expect(out.code).toBe(1)
    expect(out.stdout).toBe("")
    expect(out.stderr).toContain("accounts/0/email")
    const site = goodFile.accounts[0]!.sites[0]!
    const repeated = {
      accounts: [
        {
          id: "acc_rep",
          email: "rep@example.test",
          password: "rep-password",
          sites: [{ id: "site_rep", name: "Rep", url: "https://rep.test", articles: [{ ...site.articles[0]!, id: "art_rep" }, { ...site.articles[0]!, id: "art_rep", title: "Second" }] }],
        },
      ],
    }
    writeFileSync(join(temp.dir, "repeated.json"), JSON.stringify(repeated))
    const twice = await admin("import", join(temp.dir, "repeated.json"))
    expect(twice.code).toBe(1)
    expect(twice.stderr).toContain("accounts/0/sites/0/articles/1/id")
    // A site id another account has: its articles would be written into that account's site.
    const intoTheirs = { accounts: [{ id: "acc_into", email: "into@example.test", password: "into-password", sites: [{ ...site, name: "Not yours", backlinks: [], articles: [{ ...site.articles[0]!, id: "art_into" }] }] }] }
    writeFileSync(join(temp.dir, "into.json"), JSON.stringify(intoTheirs))
    const into = await admin("import", join(temp.dir, "into.json"))
    expect(into.code).toBe(1)
    expect(into.stderr).toContain("accounts/0/sites/0/id")
    expect(into.stderr).toContain("belongs to another account")
    expect([await count("accounts"), await count("api_keys"), await count("sites"), await count("articles")]).toEqual(before)
  })

  it("should refuse a key name over 100 characters with a clear message, printing no key", async () => {
    const long = await admin("key", "create", "--account", "new@example.test", "--name", "k".repeat(101))
    expect(long.code).toBe(1)
    expect(long.stdout).toBe("")
    expect(long.stderr).toMatch(/at most 100 characters/)
  })

  it("should add a signing key that activates later, keeping the one in force, and refuse a bad delay", async () => {
    const kids = async () => {
      const row = await firstRow("select payload from oauth_payloads where model = 'Jwks' and id = 'signing'")
      return ((row?.payload.keys ?? []) as Array<{ kid: string }>).map((k) => k.kid)
    }
    const sentAt = Date.now()
    const first = await admin("oauth", "rotate-key")
    const answeredAt = Date.now()
    // (nothing but the migrations, when this case runs without the one that migrates first)
    expect(first.stderr.replace(/^database: applied \d+ migrations\n/, "")).toBe("")
    expect(first.code).toBe(0)
    const firstKid = /signing key (es256-[0-9a-f]+)/.exec(first.stdout)?.[1]
    // on a fresh database the key in force is made first, then the new one is added beside it
    expect(await kids()).toContain(firstKid)
    expect((await kids()).length).toBe(2)
    const activatesAt = Date.parse(/from (\S+)\.$/m.exec(first.stdout)?.[1] ?? "")
    // 300 s (the default) after the command's own clock, read in whole seconds while it ran
    expect(activatesAt - 300_000).toBeGreaterThan(sentAt - 1_000)
    expect(activatesAt - 300_000).toBeLessThanOrEqual(answeredAt)
    const second = await admin("oauth", "rotate-key", "--activate-in", "0")
    expect(second.code).toBe(0)
    expect((await kids()).length).toBe(3)
    const bad = await admin("oauth", "rotate-key", "--activate-in", "soon")
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("--activate-in")
  })

  it("should prune activity entries older than the given days and keep the newer ones", async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const insert = (id: string, daysAgo: number) =>
        client.query(
          `insert into activity (id, account_id, at, channel, actor, action, status, duration_ms, request_id)
           values ($1, null, now() - make_interval(days => $2), 'api', null, 'GET /api/v1/sites', '200', 1, $1)`,
          [id, daysAgo],
        )
      await insert("act_prune_old_1", 40)
      await insert("act_prune_old_2", 31)
      await insert("act_prune_new", 29)
      const before = await count("activity")
      const out = await admin("activity", "prune", "--older-than", "30")
      expect(out.stderr).toBe("")
      expect(out.code).toBe(0)
      expect(out.stdout).toMatch(/^Deleted 2 activity entries from before \S+Z\.$/m)
      expect(await count("activity")).toBe(before - 2)
      const left = await client.query("select id from activity where id like 'act_prune_%'")
      expect(left.rows.map((r) => r.id)).toEqual(["act_prune_new"])
      for (const bad of [[], ["--older-than", "0"], ["--older-than", "a week"]]) {
        const refused = await admin("activity", "prune", ...bad)
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain("--older-than DAYS")
      }
    } finally {
      await client.end()
    }
  })

  it("should stop with one sentence and exit code 2 when the database or Redis does not answer, and exit (not wait for ever on Redis's retries)", () => {
    const run = (extra: Record<string, string>) =>
      spawnSync(nodeBin, [ADMIN, "key", "revoke", "key_none"], { cwd: repoRoot, env: { ...process.env, ...env, ...extra }, encoding: "utf8", timeout: 30_000 })
    const database = run({ DATABASE_URL: "postgres://someone:secret-password@127.0.0.1:1/content" })
    expect([database.status, database.signal]).toEqual([2, null])
    expect(database.stderr.trim()).toBe("Error: Cannot use the PostgreSQL database at 127.0.0.1:1/content (DATABASE_URL): nothing answers there (connection refused). Is it running, on that host and port?")
    const redis = run({ REDIS_URL: "redis://127.0.0.1:1" })
    expect([redis.status, redis.signal]).toEqual([2, null])
    expect(redis.stderr.trim()).toBe("Error: Cannot use the Redis server at 127.0.0.1:1 (REDIS_URL): nothing answers there, or it closed the connection. Is it running, on that host and port?")
  })

  it("should warn on stderr of a variable that looks like a misspelt setting, and go on", () => {
    const run = spawnSync(nodeBin, [ADMIN, "migrate"], { cwd: repoRoot, env: { ...process.env, ...env, DATABASE_ULR: "postgres://elsewhere/x" }, encoding: "utf8", timeout: 30_000 })
    expect(run.status).toBe(0)
    expect(run.stderr.trim()).toBe("Warning: DATABASE_ULR is not a setting (is it DATABASE_URL, misspelt?); it is ignored.")
  })

  it("should answer usage errors with exit code 1 and the usage text, and a refused value with its sentence alone", async () => {
    const unknown = await admin("frobnicate")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("Usage: npm run admin")
    const missing = await admin("account", "create", "--email", "x@example.test")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("--password")
    expect(missing.stderr).toContain("Usage: npm run admin")
    expect((await admin("key", "create", "--bogus")).code).toBe(1)
    // Node's parser's message, its sentences on one line (not its line breaks escaped)
    const dashed = await admin("oauth", "rotate-key", "--activate-in", "-5")
    expect(dashed.code).toBe(1)
    expect(dashed.stderr).toMatch(/^Error: Option '--activate-in' argument is ambiguous\. Did you forget .* To specify an option argument starting with a dash .*$/m)
    expect(dashed.stderr).not.toContain("\\u000a")
    // a well-formed command whose value is refused gets its sentence alone, not the usage beside it
    const short = await admin("account", "create", "--email", "short@example.test", "--password", "short")
    expect(short.code).toBe(1)
    expect(short.stderr).toMatch(/^Error: .*password.*$/m)
    expect(short.stderr).not.toContain("Usage:")
  })

  it("should refuse a stray argument or an option of another command before writing anything (an unquoted name is not cut to its first word)", async () => {
    const before = [await count("accounts"), await count("api_keys")]
    const cases = [
      ["account", "create", "--email", "stray@example.test", "--password", "long-enough", "--name", "John", "Smith"],
      ["key", "create", "--account", "new@example.test", "--name", "my", "key"],
      ["key", "create", "--account", "new@example.test", "--older-than", "3"],
      ["account", "create", "--email", "other@example.test", "--password", "long-enough", "--read-only"],
      ["migrate", "now"],
      ["key", "revoke", "key_missing", "--name", "x"],
    ]
    for (const args of cases) {
      const out = await admin(...args)
      expect(out.code, args.join(" ")).toBe(1)
      expect(out.stdout, args.join(" ")).toBe("")
      expect(out.stderr, args.join(" ")).toMatch(/^Error: .*(does not take --|unexpected argument '(Smith|key|now)')/)
    }
    expect([await count("accounts"), await count("api_keys")]).toEqual(before)
  })

  it("should print an unknown command or option escaped, never a terminal escape sequence from the command line", async () => {
    for (const args of [["bogus\u001b[31mRED"], ["--\u001b]0;owned\u0007"]]) {
      const out = await admin(...args)
      expect(out.code).toBe(1)
      expect(out.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
      expect(out.stderr).toContain("\\u001b")
    }
  })
})

// Each case starts Node processes or opens a database: on a shared, loaded 2-core machine (CI is one)
// that alone has taken 20 s, so a case gets 120 s. A wait for work to finish, not a speed check.
describe("admin command line on the embedded database", { timeout: 120_000 }, () => {
  const temp = createTempDir("cs-admin-embedded-")
  afterAll(() => temp.remove())

  it("should import into the embedded database under DATA_DIR", async () => {
    writeFileSync(join(temp.dir, "good.json"), JSON.stringify(goodFile))
    const out = await runNode(ADMIN, ["import", join(temp.dir, "good.json")], { DATA_DIR: join(temp.dir, "data"), DATABASE_URL: "" })
    expect(out.stderr).toMatch(/^database: applied \d+ migrations\n$/)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain("created 1 accounts")
  })

  it("should refuse a command on a DATA_DIR that holds no database, making none, and run it where one is", async () => {
    const mistyped = join(temp.dir, "dta")
    const refused = await runNode(ADMIN, ["key", "revoke", "key_cli"], { DATA_DIR: mistyped, DATABASE_URL: "" })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("holds no database")
    expect(existsSync(mistyped)).toBe(false)
    // the database the import made above: the same command is run there
    const revoked = await runNode(ADMIN, ["key", "revoke", "key_cli"], { DATA_DIR: join(temp.dir, "data"), DATABASE_URL: "" })
    expect(revoked.stderr).toBe("")
    expect(revoked.code).toBe(0)
  })
})
