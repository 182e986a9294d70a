/**
 * The embedder's example (examples/embed/main.ts, shown in core/README.md) runs as written: here
 * under Node, and again under Deno with the rest of the core's tests (`npm run test:deno`).
 */
import { describe, expect, it } from "vitest"
import { runExample } from "../../examples/embed/main.ts"

describe("the embedding example", () => {
  it("should read the links to keep, edit, be refused a body without them, diff and restore", async () => {
    const outcome = await runExample()
    expect(outcome.protectedLinks).toEqual([{ type: "backlink", href: "https://partner.example/offer", text: "partner offer" }])
    expect(outcome.editedBody).toContain("<p>Roses rest from November to March.</p>")
    expect(outcome.refusal).toBe("ProtectedLinkChanged")
    expect(outcome.diff.unified).toContain("-<p>Roses rest in November.</p>")
    expect(outcome.diff.unified).toContain("+<p>Roses rest from November to March.</p>")
    expect([outcome.diff.added, outcome.diff.removed]).toEqual([4, 2])
    expect(outcome.restoredBody).toContain("<p>Roses rest in November.</p>")
    expect(outcome.revisions).toBe(3)
  })
})
