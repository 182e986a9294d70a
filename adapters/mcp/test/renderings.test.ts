import { describe, expect, it } from "vitest"
import { toolNamed } from "../src/tools.ts"

const render = (name: string, result: unknown): string => {
  const tool = toolNamed(name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  return tool.render(result)
}

describe("tool text renderings", () => {
  it("should say in diff_revisions' text when the comparison was coarser than word by word (its word counts mean less)", () => {
    const note = "The bodies differ too much to align line by line within one comparison's budget of work: every line between is shown removed and added whole."
    const text = render("diff_revisions", {
      from: 1,
      to: 2,
      title: null,
      body: { unified: "--- revision 1\n+++ revision 2\n@@ -1 +1 @@\n-<p>a b</p>\n+<p>c d</p>", added_words: 2, removed_words: 2, granularity: "whole", note },
    })
    expect(text).toContain(note)
    const fine = render("diff_revisions", { from: 1, to: 2, title: null, body: { unified: "", added_words: 0, removed_words: 0, granularity: "word", note: null } })
    expect(fine).not.toContain("null")
  })
})
