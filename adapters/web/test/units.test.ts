import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseForm } from "../src/forms.ts"
import { foldRows } from "../src/wordCompare.ts"
import { escapeHtml, html, raw } from "../src/html.ts"
import { sentences } from "../src/pageKit.ts"
import { pager } from "../src/ui.ts"
import { activityTable } from "../src/pages/activity.ts"
import { actionWords, CHANGE_ACTIONS, whoWords } from "../src/activityWords.ts"
import { operations } from "../../rest/src/rest/operations.ts"
import { API_PREFIX } from "../../rest/src/rest/mountRest.ts"
import { tools } from "../../mcp/src/tools.ts"
import { searchTools } from "../../mcp/src/searchTools.ts"
import { COUNTED_PROTOCOL_METHODS } from "../../mcp/src/calls.ts"
import { BODY_LIMIT_MESSAGE, compareBodies, decodeInput, lineText, type InvalidRequest, MAX_NESTING_DEPTH, UNSTORABLE_TEXT_MESSAGE, UpdateArticleBody } from "@content-site/core"
import { Cause, Effect, Exit, Option } from "effect"

describe("html", () => {
  it("should escape interpolated text in content and attributes", () => {
    const evil = `<img src=x onerror="alert('1')">&`
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</p>',
    )
  })

  it("should insert fragments and arrays as they are and skip null, undefined and false", () => {
    const items = ["a<", "b"].map((x) => html`<li>${x}</li>`)
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${raw("<hr>")}`.value).toBe("<ul><li>a&lt;</li><li>b</li></ul><hr>")
  })

  it("should escape backticks too", () => {
    expect(escapeHtml("`x`")).toBe("&#96;x&#96;")
  })
})

const compareRows = (before: string, after: string) => foldRows(compareBodies(before, after, { reading: true }).rows ?? [])

describe("word comparison", () => {
  it("should read a stored line as text: tags dropped, references decoded, spaces collapsed", () => {
    expect(lineText('<p>Fish &amp; chips<br>and <a href="x">peas</a> &#8211; &#x27;ok&#x27;</p>')).toBe("Fish & chips and peas – 'ok'")
  })

  it("should pair a changed paragraph word by word and fold unchanged ones far from it", () => {
    const before = "<p>one</p><p>two</p><p>three</p><p>four</p><p>The quick brown fox.</p>"
    const after = "<p>one</p><p>two</p><p>three</p><p>four</p><p>The slow brown fox.</p><p>New end.</p>"
    const rows = compareRows(before, after)
    expect(rows[0]).toEqual({ kind: "gap", texts: ["one", "two"] })
    expect(rows.slice(1, 3)).toEqual([{ kind: "same", text: "three" }, { kind: "same", text: "four" }])
    expect(rows[3]).toEqual({
      kind: "changed",
      before: [{ op: "same", text: "The " }, { op: "del", text: "quick" }, { op: "same", text: " brown fox." }],
      after: [{ op: "same", text: "The " }, { op: "ins", text: "slow" }, { op: "same", text: " brown fox." }],
    })
    expect(rows[4]).toEqual({ kind: "changed", before: null, after: [{ op: "ins", text: "New end." }] })
  })

  it("should fold a run of unchanged paragraphs only when it hides more than one", () => {
    const paragraphs = (n: number, changedAt: number, changed: string) =>
      Array.from({ length: n }, (_, i) => `<p>${i === changedAt ? changed : `p${i + 1}`}</p>`).join("")
    // three before the change: the first is two away from the context, alone, so it stays
    const alone = compareRows(paragraphs(4, 3, "old"), paragraphs(4, 3, "new"))
    expect(alone.map((r) => r.kind)).toEqual(["same", "same", "same", "changed"])
    // four before it: two fold, two stay as context; after it, five fold
    const folded = compareRows(paragraphs(12, 4, "old"), paragraphs(12, 4, "new"))
    expect(folded.map((r) => (r.kind === "gap" ? `gap ${r.texts.join(" ")}` : r.kind))).toEqual(
      ["gap p1 p2", "same", "same", "changed", "same", "same", "gap p8 p9 p10 p11 p12"],
    )
  })
})

describe("sentences", () => {
  it("should tell each of the body's refusals by its reason, not all as too large", () => {
    expect(sentences([{ path: "body", message: BODY_LIMIT_MESSAGE }])).toEqual(["The body must be at most 1 MiB of HTML."])
    expect(sentences([{ path: "body", message: `HTML must not be nested deeper than ${MAX_NESTING_DEPTH} elements` }])).toEqual([
      `The body is HTML nested deeper than ${MAX_NESTING_DEPTH} elements.`,
    ])
    expect(sentences([{ path: "body", message: UNSTORABLE_TEXT_MESSAGE }])).toEqual(["The body must not contain NUL (U+0000) characters or unpaired surrogates."])
    expect(sentences([{ path: "body", message: "some new reason" }])).toEqual(["Some new reason."])
  })

  it("should tell a title's or reason's unstorable characters as such, not as a length, as the decoder words them", () => {
    const errorsOf = (input: Record<string, string>) => {
      const exit = Effect.runSyncExit(decodeInput(UpdateArticleBody, input, "Edit"))
      if (Exit.isSuccess(exit)) throw new Error("decoded")
      return (Cause.findErrorOption(exit.cause).pipe(Option.getOrThrow) as InvalidRequest).errors
    }
    expect(sentences(errorsOf({ title: "a\u0000b" }))).toEqual(["The title must not contain NUL (U+0000) characters or unpaired surrogates."])
    expect(sentences(errorsOf({ title: "t", reason: "a\ud800b" }))).toEqual(["The reason must not contain NUL (U+0000) characters or unpaired surrogates."])
    expect(sentences(errorsOf({ title: " " }))).toEqual(["The title must be 1 to 300 characters long, not counting spaces at either end."])
    expect(sentences(errorsOf({ title: "t", reason: "r".repeat(501) }))).toEqual(["The reason must be at most 500 characters long."])
  })

  it("should tell a start date after the end date by the order, not as a malformed date", () => {
    expect(sentences([{ path: "from", message: "from is after to" }])).toEqual(["From must not be after To."])
    expect(sentences([{ path: "from", message: "Expected a date" }])).toEqual(["From must be a date such as 2026-11-01."])
  })
})

describe("activityTable", () => {
  const entry = (count: number) => ({
    id: `act_${count}`,
    account_id: "acc_1",
    at: "2026-11-24T12:00:00.000Z",
    channel: "api" as const,
    actor: { type: "api_key" as const, id: "key_1", name: "ci" },
    action: "PUT /api/v1/articles/{id}",
    site_id: null,
    article_id: null,
    status: 403,
    error_code: "insufficient_scope",
    duration_ms: 1,
    request_id: `req_${count}`,
    count,
  })
  const page = (entries: ReadonlyArray<ReturnType<typeof entry>>) => ({ data: entries, pagination: { page: 1, per_page: 20, total: entries.length, total_pages: 1 } })

  it("should say how many refused calls a summary entry stands for, and nothing of the kind for one call", () => {
    const summary = activityTable(page([entry(37)]), new Map(), false).value
    expect(summary).toContain("37 refused calls in this minute, counted in one entry")
    expect(summary).toContain("<dt>Calls</dt><dd>37</dd>")
    expect(activityTable(page([entry(1)]), new Map(), false).value).not.toContain("refused calls in this minute")
  })
})

describe("names on the pages", () => {
  it("should show an actor's name without bidi controls", () => {
    const e = { actor: { type: "oauth_client" as const, id: "c1", name: "Helper\u202Etnega" } }
    expect(whoWords(e as Parameters<typeof whoWords>[0])).toBe("Agent “Helpertnega”")
  })
})

describe("parseForm", () => {
  const byUrlSearchParams = (text: string) => {
    const fields: Record<string, string> = {}
    for (const [k, v] of new URLSearchParams(text)) fields[k] = v
    return fields
  }

  it("should read a form exactly as URLSearchParams does, stray percents and bytes that are not UTF-8 included", () => {
    const unit = fc.constantFrom("a", "=", "&", "+", "%", "2", "B", "E", "F", "C3", "%A9", "%E2%82", "%AC", "%FF", "%ED%A0%80", "?", "é", "😀", " ")
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 24 }), (text) => {
        expect(parseForm(text)).toStrictEqual(byUrlSearchParams(text))
      }),
      { numRuns: 5000 },
    )
    const body = "<p class=\"x\">Caf\u00e9 & 50% off + more 😀</p>".repeat(1000)
    const form = new URLSearchParams({ _csrf: "t", title: "A title", body }).toString()
    expect(parseForm(form)).toStrictEqual({ _csrf: "t", title: "A title", body })
  })

  it("should read fields without `=` between fields with one as URLSearchParams does", () => {
    for (const text of ["a&b&c=d&e&=f&g=", "a&a&a&a", "x=1&a&b&c&y=2=3&z", "&&a=&=&b"]) expect(parseForm(text)).toStrictEqual(byUrlSearchParams(text))
  })
})

describe("actionWords", () => {
  it("should tell in words every REST operation, MCP tool and counted MCP method the log holds, writes as changes", () => {
    const logged = [
      ...operations.map((op) => ({ action: `${op.method} ${API_PREFIX}${op.path}`, change: op.method !== "GET" })),
      ...[...tools, ...searchTools].map((t) => ({ action: t.name, change: t.annotations.readOnlyHint !== true })),
      ...[...COUNTED_PROTOCOL_METHODS].map((action) => ({ action, change: false })),
    ]
    for (const { action, change } of logged) {
      expect(actionWords(action), action).not.toBe(action)
      expect(CHANGE_ACTIONS.includes(action), action).toBe(change)
    }
  })
})

describe("pager", () => {
  const links = (page: number, total_pages: number) =>
    [...pager({ page, per_page: 50, total: total_pages * 50, total_pages }, "/activity", { changes: "1", page: "9" }).value.matchAll(/<a [^>]*href="([^"]+)"[^>]*>([^<]+)</g)].map((m) => `${m[2]} ${m[1]}`)

  it("should link the first and the last page from the middle of a long list, keeping the other parameters", () => {
    expect(links(5, 40)).toEqual([
      "« First /activity?changes=1&amp;page=1",
      "← Previous /activity?changes=1&amp;page=4",
      "Next → /activity?changes=1&amp;page=6",
      "Last » /activity?changes=1&amp;page=40",
    ])
  })

  it("should not repeat a link: no First on page 2 (Previous is page 1), no Last on the last but one, none at the ends", () => {
    expect(links(2, 3).map((l) => l.split(" /")[0])).toEqual(["← Previous", "Next →"])
    expect(links(1, 3).map((l) => l.split(" /")[0])).toEqual(["Next →", "Last »"])
    expect(links(3, 3).map((l) => l.split(" /")[0])).toEqual(["« First", "← Previous"])
    expect(links(1, 1)).toEqual([])
  })
})
