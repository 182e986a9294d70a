import { describe, expect, it } from "vitest"
import { displayName } from "../src/displayName.ts"

describe("displayName", () => {
  it("should drop every bidirectional override, isolate and mark, and keep the rest", () => {
    const controls = ["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F", "\u061C"]
    for (const c of controls) expect(displayName(`Good${c}Agent`)).toBe("GoodAgent")
    // "Invoice‮fdp.exe" would read as "Invoiceexe.pdf"
    expect(displayName("Invoice\u202Efdp.exe")).toBe("Invoicefdp.exe")
    expect(displayName("وكيل Agent 🙂 é")).toBe("وكيل Agent 🙂 é")
  })
})
