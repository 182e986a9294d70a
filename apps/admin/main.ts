/**
 * The admin command line: `npm run admin -- COMMAND ...`, with the server's environment
 * (DATABASE_URL, or DATA_DIR for the embedded database; REDIS_URL). Composition only: the work is
 * done by the core's use cases on the ORM's Layers. Exit codes: 0 done, 1 usage or validation
 * error (for `rewrite apply`: a line was refused), 2 the database could not be used.
 */
// Only what reading the arguments needs is imported up front: the core, the ORM, the platform
// and the configuration are imported once the command is known to be well formed, so a usage
// error answers without loading them (about a second and a half of CPU a start).
import type { InvalidRequest, PreparedImport, Settings as SettingsTag } from "@content-site/core"
import type { OrmDatabase } from "@content-site/orm"
import type { Effect, Layer as LayerOf } from "effect"
import { accessSync, constants, readFileSync } from "node:fs"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { printable } from "./printable.ts"

const USAGE = `Usage: npm run admin -- COMMAND

Commands:
  migrate                                   bring the database schema up to date
  import FILE.json                          import accounts, keys, sites, articles, backlinks (idempotent by id)
  account create --email E --password P [--name N]
  key create --account EMAIL [--name N] [--read-only]   prints the new key once
  key revoke KEY_ID
  oauth rotate-key [--activate-in SECONDS]  add a new token signing key for MCP connections; it signs
                                            after SECONDS (default 300: running servers reload keys
                                            every minute), older tokens stay valid
  activity prune --older-than DAYS          delete activity entries more than DAYS (at least 1) days old
                                            (whole months by dropping their partitions); the service
                                            itself keeps the log for ever
  rewrite apply FILE.jsonl [--dry-run]      apply a batch of the platform's rewrite job: one JSON object a line,
                                            { rewrite_id, article_id, title?, body?, reason?, if_revision? };
                                            each line is checked like an API edit and refused alone; a line
                                            applied before is not applied again; --dry-run writes nothing.
                                            Exit 1 if a line was refused, 2 if the database failed a line

Environment: the server's (docs/operations.md, "Configuration"): DATABASE_URL (PostgreSQL) or DATA_DIR
(embedded database, default ./data), REDIS_URL (request counters in Redis), PUBLIC_URL and the limits;
a bad setting stops the command (exit 1), as it stops the server's start.`

/** A usage or validation problem: exit code 1. */
class UsageError extends Error {
  /** Whether the command line itself was malformed (then the usage follows the message). */
  readonly showUsage: boolean
  constructor(message: string, showUsage = false) {
    super(message)
    this.showUsage = showUsage
  }
}
/** A command line that is not one of the usage's shapes: the message, then the usage. */
const malformed = (message: string) => new UsageError(message, true)

/** The commands that may start an embedded database where none is yet. */
const STARTS_DATABASE = new Set(["migrate", "import", "account create"])

const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim())

/**
 * What an unexpected failure (a defect: a statement the database refused, a fault) says, in one
 * line: its message, never its stack or the cause's rendering with every fiber's trace.
 */
const describeDefect = (failure: unknown): string => {
  const message = failure instanceof Error ? failure.message : String(failure)
  const line = message.split("\n").find((l) => l.trim() !== "")?.trim() ?? "an unexpected failure"
  return `${printable(line)}${/[.!?]$/.test(line) ? "" : "."}`
}

const describeInvalid = (e: InvalidRequest): string =>
  [printable(e.detail), ...e.errors.filter((x) => !e.detail.includes(x.path)).map((x) => `  ${printable(x.path)}: ${printable(x.message)}`)].join("\n")

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const { values, positionals, tokens } = (() => {
    try {
      return parseArgs({
        args: [...argv],
        allowPositionals: true,
        strict: true,
        tokens: true,
        options: {
          email: { type: "string" },
          password: { type: "string" },
          name: { type: "string" },
          account: { type: "string" },
          "read-only": { type: "boolean" },
          "activate-in": { type: "string" },
          "older-than": { type: "string" },
          "dry-run": { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
      })
    } catch (e) {
      // (node's message quotes the option as typed: a terminal escape in it is printed escaped; its own line breaks join its sentences on one line)
      throw malformed((e as Error).message.split("\n").map(printable).join(" "))
    }
  })()
  // An option given twice (`--email a@x --email b@x`, a pasted line with a flag left in) would
  // otherwise keep the last value without a word: refused, whichever it is.
  const seen = new Set<string>()
  for (const token of tokens) {
    if (token.kind !== "option" || token.name === "help") continue
    if (seen.has(token.name)) throw malformed(`--${token.name} is given twice: give it once.`)
    seen.add(token.name)
  }
  const [command, sub, ...rest] = positionals
  if (values.help || command === "help") {
    console.log(USAGE)
    return 0
  }
  // No command at all is a usage error as any other: said on stderr (stdout stays empty for a
  // script that reads it), exit code 1.
  if (command === undefined) throw malformed("No command given.")
  const known = new Set(["migrate", "import", "account create", "key create", "key revoke", "oauth rotate-key", "activity prune", "rewrite apply"])
  const name = command === "migrate" || command === "import" ? command : `${command} ${sub ?? ""}`.trim()
  if (!known.has(name)) throw malformed(`Unknown command '${printable(name)}'.`)
  // Each command's own options and arguments, nothing else: an unquoted `--name John Smith` would
  // otherwise create "John" and drop "Smith" without a word, and an option of another command
  // (`key create --older-than 3`) would be silently ignored.
  const optionsOf: Record<string, ReadonlyArray<string>> = {
    migrate: [],
    import: [],
    "account create": ["email", "password", "name"],
    "key create": ["account", "name", "read-only"],
    "key revoke": [],
    "oauth rotate-key": ["activate-in"],
    "activity prune": ["older-than"],
    "rewrite apply": ["dry-run"],
  }
  const argumentsOf: Record<string, number> = { migrate: 0, import: 1, "key revoke": 1, "rewrite apply": 1 }
  if (values["dry-run"] && name !== "rewrite apply") throw malformed("--dry-run is an option of rewrite apply only.")
  for (const option of Object.keys(values)) {
    if (option !== "help" && !optionsOf[name]!.includes(option)) throw malformed(`${name} does not take --${option}.`)
  }
  const given = command === "migrate" || command === "import" ? positionals.slice(1) : rest
  const extra = given.slice(argumentsOf[name] ?? 0)
  if (extra.length > 0) {
    throw malformed(`${name}: unexpected argument '${printable(extra[0]!)}' (a value with spaces needs quotes: --name "John Smith").`)
  }

  let file: unknown
  if (command === "import") {
    if (sub === undefined || rest.length > 0) throw malformed("import takes exactly one FILE.json.")
    let bytes: Buffer
    try {
      bytes = readFileSync(sub)
    } catch (e) {
      throw new UsageError(`Cannot read ${printable(sub)}: ${printable((e as Error).message)}`)
    }
    let text: string
    try {
      // UTF-8 or refused, as an API body and a rewrite line are: never read with replacement characters
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      throw new UsageError(`${printable(sub)} is not valid UTF-8.`)
    }
    try {
      file = JSON.parse(text)
    } catch (e) {
      throw new UsageError(`${printable(sub)} is not valid JSON: ${printable((e as Error).message)}`)
    }
  }
  if (name === "account create" && (!values.email || !values.password)) throw malformed("account create needs --email and --password.")
  if (name === "key create" && !values.account) throw malformed("key create needs --account EMAIL.")
  if (name === "key revoke" && (rest.length !== 1 || !rest[0])) throw malformed("key revoke takes exactly one KEY_ID.")
  const activateIn = values["activate-in"]
  if (name === "oauth rotate-key" && activateIn !== undefined && !/^\d{1,7}$/.test(activateIn)) throw malformed("--activate-in takes a number of seconds.")
  const olderThan = values["older-than"]
  if (name === "activity prune" && (olderThan === undefined || !/^[1-9]\d{0,4}$/.test(olderThan))) {
    throw malformed("activity prune needs --older-than DAYS, a whole number of days from 1.")
  }

  if (name === "rewrite apply") {
    if (rest.length !== 1 || !rest[0]) throw malformed("rewrite apply takes exactly one FILE.jsonl.")
    try {
      accessSync(rest[0], constants.R_OK)
    } catch (e) {
      throw new UsageError(`Cannot read ${printable(rest[0])}: ${printable((e as Error).message)}`)
    }
  }

  const [
    { AccountRepository, adminKeyCall, createAccount, createApiKey, listApiKeys, prepareImport, revokeApiKey, Settings, writeImport },
    { DEFAULT_ACTIVATION_SECONDS, rotateSigningKey },
    { hasEmbeddedDatabase, openDatabase },
    { nodePlatform, workerHtmlAnalyzer },
    { Cause, Exit, Layer, ManagedRuntime, Option },
    { ConfigError, misspeltSettings, readConfig },
    { rewriteApply },
  ] = await Promise.all([
    import("@content-site/core"),
    // The signing keys alone, not the MCP adapter's whole surface (its OAuth server and SDK).
    import("@content-site/mcp/signingKeys"),
    import("@content-site/orm"),
    import("@content-site/platform"),
    import("effect"),
    import("../server/config.ts"),
    import("./rewrite.ts"),
  ])
  const env = process.env
  // The service's limits and public URL, from the same environment the server reads.
  const config = (() => {
    try {
      return readConfig(env)
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(`Configuration error: ${e.message}`)
      throw e
    }
  })()
  // A mistyped DATABASE_URL would otherwise send an import into the embedded database unnoticed.
  for (const { given, meant } of misspeltSettings(env)) process.stderr.write(`Warning: ${given} is not a setting (is it ${meant}, misspelt?); it is ignored.\n`)
  const settings = Layer.succeed(Settings, {
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    limits: config.limits,
  })
  // The whole import file is checked before the database is opened (opening it migrates it, and
  // makes an embedded one): a refused file leaves the database as it was, schema included.
  let prepared: PreparedImport | undefined
  if (name === "import") {
    const checking = ManagedRuntime.make(nodePlatform())
    try {
      const exit = await checking.runPromiseExit(prepareImport(file))
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        throw error ? new UsageError(describeInvalid(error)) : new Error(describeDefect(Cause.squash(exit.cause)))
      }
      prepared = exit.value
    } finally {
      await checking.dispose()
    }
  }
  const databaseUrl = nonEmpty(env["DATABASE_URL"])
  const redisUrl = nonEmpty(env["REDIS_URL"])
  const dataDir = nonEmpty(env["DATA_DIR"]) ?? "./data"
  // A command that only changes what is there (a key, the log, a rewrite) refuses an embedded
  // database that does not exist rather than make an empty one under a mistyped DATA_DIR and
  // answer "not found"; migrate, import and account create may start one.
  if (databaseUrl === undefined && !STARTS_DATABASE.has(name) && !hasEmbeddedDatabase(dataDir)) {
    throw new UsageError(`DATA_DIR ${printable(resolve(dataDir))} holds no database: check the path (migrate, import and account create make one there; so does the server's first start).`)
  }
  const db: OrmDatabase = await openDatabase({
    ...(databaseUrl ? { databaseUrl } : {}),
    dataDir,
    ...(redisUrl ? { redisUrl } : {}),
    housekeepingIntervalMs: 0,
  })
  const runtime = ManagedRuntime.make(Layer.mergeAll(db.layer, nodePlatform(), settings))
  const run = async <A, E extends { _tag: string }>(
    effect: Effect.Effect<A, E, LayerOf.Success<typeof db.layer> | LayerOf.Success<ReturnType<typeof nodePlatform>> | SettingsTag>,
  ) => {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
    if (error && error._tag === "InvalidRequest") throw new UsageError(describeInvalid(error as unknown as InvalidRequest))
    if (error && error._tag === "NotFound") throw new UsageError(`Not found: ${(error as unknown as { resource: string; id: string }).resource} ${printable((error as unknown as { id: string }).id)}.`)
    throw new Error(error && "detail" in error ? printable(String((error as { detail: unknown }).detail)) : describeDefect(Cause.squash(exit.cause)))
  }
  try {
    switch (name) {
      case "migrate": {
        await db.migrate()
        console.log(`The ${db.kind === "pglite" ? "embedded" : "PostgreSQL"} database schema is up to date.`)
        return 0
      }
      case "import": {
        const summary = await run(writeImport(prepared!))
        const c = summary.created
        console.log(
          `Imported ${printable(sub ?? "")}: created ${c.accounts} accounts, ${c.apiKeys} API keys, ${c.sites} sites, ` +
            `${c.articles} articles, ${c.backlinks} backlinks; ${summary.skipped} already present (left unchanged).`,
        )
        // keys the file gave no plaintext for: made now, and shown this once (as `key create` shows one)
        for (const k of summary.newKeys) {
          console.log(`${k.scope === "read-only" ? "Read-only" : "Write"} API key ${printable(k.id)} for ${printable(k.account)}, named “${printable(k.name)}”, shown only once: ${k.key}`)
        }
        return 0
      }
      case "account create": {
        const account = await run(
          createAccount({ email: values.email!, password: values.password!, ...(values.name ? { name: values.name } : {}) }),
        )
        console.log(`Created account ${printable(account.id)} (${printable(account.email)}).`)
        return 0
      }
      case "key create": {
        const email = values.account!.trim().toLowerCase()
        const account = await run(AccountRepository.use((r) => r.findByEmail(email)))
        if (Option.isNone(account)) throw new UsageError(`No account with the email ${printable(email)}.`)
        const scope = values["read-only"] ? "read-only" : "write"
        // (the name as it is stored, which the entry in the account's log names too)
        const keyName = (values.name ?? "").trim() || "API key"
        // The entry (the platform's administrator) is written with the key, in its transaction.
        const accountId = account.value.id
        const call = await run(adminKeyCall(accountId, "key create", keyName))
        const { key, view } = await run(createApiKey(accountId, { name: keyName, scope }, call))
        console.error(`Created ${scope} API key ${printable(view.id)} for ${printable(email)}, named “${printable(view.name)}”. It is shown only once; store it now:`)
        console.log(key)
        return 0
      }
      case "oauth rotate-key": {
        const { kid, activatesAt } = await rotateSigningKey(runtime, { activateInSeconds: Number(activateIn ?? DEFAULT_ACTIVATION_SECONDS) })
        console.log(`Added signing key ${kid}; it signs new access tokens from ${activatesAt.toISOString()}.`)
        return 0
      }
      case "activity prune": {
        const before = new Date(Date.now() - Number(olderThan) * 86_400_000)
        const pruned = await db.pruneActivity(before)
        console.log(`Deleted ${pruned.deleted} activity entries from before ${before.toISOString()}.`)
        if (pruned.droppedPartitions.length > 0) console.log(`Dropped the monthly partitions ${pruned.droppedPartitions.join(", ")}.`)
        return 0
      }
      case "rewrite apply": {
        // Only this command edits articles: it alone starts the HTML policy's worker (one thread, lines go one by one).
        const job = ManagedRuntime.make(Layer.mergeAll(db.layer, nodePlatform(), settings, workerHtmlAnalyzer({ maxThreads: 1 })))
        try {
          return await rewriteApply((effect) => job.runPromise(effect), rest[0]!, values["dry-run"] === true)
        } finally {
          await job.dispose()
        }
      }
      case "key revoke": {
        const keyId = rest[0]!
        const owner = await db.keyOwner(keyId)
        if (owner === null) throw new UsageError(`No API key with the id ${printable(keyId)}.`)
        // (run twice, by a script or two operators at once: said so, its revocation time kept; one
        // step in the database, so of two runs at once exactly one revokes it)
        // (the entry, naming the key, written with the revocation when this run revoked it)
        const keyName = (await run(listApiKeys(owner))).find((k) => k.id === keyId)?.name ?? keyId
        const call = await run(adminKeyCall(owner, "key revoke", keyName))
        const revoked = await run(revokeApiKey(owner, keyId, call))
        if (revoked.already) {
          console.log(`API key ${printable(keyId)} was revoked already, at ${revoked.revoked_at}.`)
          return 0
        }
        console.log(`Revoked API key ${printable(keyId)}.`)
        return 0
      }
    }
    return 1
  } finally {
    await runtime.dispose()
    await db.close()
  }
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (e) {
  if (e instanceof UsageError) {
    console.error(`Error: ${e.message}`)
    if (e.showUsage) console.error(`\n${USAGE}`)
    process.exitCode = 1
  } else {
    console.error(`Error: ${e instanceof Error ? e.message : String(e)}`)
    process.exitCode = 2
  }
}
