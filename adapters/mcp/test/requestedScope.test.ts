import { describe, expect, it } from "vitest"
import { clientScope, requestedScope } from "../src/authorizationServer.ts"

describe("requestedScope", () => {
  it("should ask for mcp, with mcp:read beside it, when a request names no MCP scope", () => {
    expect(requestedScope(undefined, undefined)).toBe("mcp mcp:read")
    expect(requestedScope("", undefined)).toBe("mcp mcp:read")
    expect(requestedScope("offline_access", undefined)).toBe("offline_access mcp mcp:read")
  })

  it("should add mcp:read to a request for mcp, so the person may grant reading only", () => {
    expect(requestedScope("mcp", undefined)).toBe("mcp mcp:read")
    expect(requestedScope("mcp offline_access", "mcp offline_access")).toBe("mcp offline_access mcp:read")
    expect(requestedScope("mcp:read mcp", undefined)).toBe("mcp:read mcp")
  })

  it("should leave a request for mcp:read alone: nothing more is asked for", () => {
    expect(requestedScope("mcp:read", undefined)).toBe("mcp:read")
    expect(requestedScope("mcp:read offline_access", undefined)).toBe("mcp:read offline_access")
  })

  it("should keep the default within a client's registered scope", () => {
    expect(requestedScope(undefined, "mcp:read offline_access")).toBe("mcp:read")
    expect(requestedScope(undefined, "offline_access")).toBe("")
  })
})

describe("clientScope", () => {
  it("should put mcp:read beside a registered mcp, since reading only is less than mcp gives", () => {
    expect(clientScope("mcp")).toBe("mcp mcp:read")
    expect(clientScope("mcp offline_access")).toBe("mcp offline_access mcp:read")
    expect(clientScope("mcp:read mcp")).toBe("mcp:read mcp")
  })

  it("should never widen a registration without mcp: mcp:read, offline_access or no scope at all stay as they are", () => {
    expect(clientScope("mcp:read")).toBe("mcp:read")
    expect(clientScope("mcp:read offline_access")).toBe("mcp:read offline_access")
    expect(clientScope("offline_access")).toBe("offline_access")
    expect(clientScope(undefined)).toBeUndefined()
    expect(clientScope("")).toBe("")
  })

  it("should let requestedScope keep mcp:read alone for a client registered for mcp", () => {
    expect(requestedScope("mcp:read", clientScope("mcp"))).toBe("mcp:read")
    expect(requestedScope(undefined, clientScope("mcp"))).toBe("mcp mcp:read")
  })
})
