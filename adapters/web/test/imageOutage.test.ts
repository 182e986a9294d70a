/**
 * What the featured image form says of an upload the database did not confirm: its change may
 * have committed before the connection dropped, and every upload stores a new file, so a second
 * upload of the same image makes one more revision.
 */
import { InvalidRequest, Unavailable } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { imageRefusalMessage } from "../src/pages/articleImage.routes.ts"

describe("a featured image upload during a database outage", () => {
  it("should say the image may or may not have been saved, to look at the article, and that uploading again makes one more revision if it was", () => {
    const message = imageRefusalMessage(new Unavailable({ detail: "The database cannot answer now." }), "The database cannot answer now.")
    expect(message).toContain("may or may not have been saved")
    expect(message).toContain("Look at the article")
    expect(message).toContain("uploading again makes one more revision with the same image")
    expect(message).not.toMatch(/not saved/i)
  })

  it("should still say a refused image was not saved", () => {
    expect(imageRefusalMessage(new InvalidRequest({ detail: "Bad image.", errors: [] }), "Bad image.")).toBe("Image not saved: Bad image.")
  })
})
