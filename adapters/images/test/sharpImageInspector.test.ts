import { ImageInspector } from "@content-site/core"
import { Effect, Exit, ManagedRuntime } from "effect"
import { execFile } from "node:child_process"
import { fileTypeFromBuffer } from "file-type"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { deflateSync, crc32 } from "node:zlib"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import { makeSharpImageInspector, sharpImageInspector } from "../src/index.ts"

const inspect = (bytes: Uint8Array) =>
  Effect.runPromise(Effect.gen(function* () {
    return yield* (yield* ImageInspector).inspect(bytes, "acc_a")
  }).pipe(Effect.provide(sharpImageInspector)))

const refusal = (bytes: Uint8Array) =>
  Effect.runPromise(Effect.flip(Effect.gen(function* () {
    return yield* (yield* ImageInspector).inspect(bytes, "acc_a")
  })).pipe(Effect.provide(sharpImageInspector)))

const solid = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })

const formats = [
  { format: "jpeg", mime: "image/jpeg", extension: "jpg" },
  { format: "png", mime: "image/png", extension: "png" },
  { format: "webp", mime: "image/webp", extension: "webp" },
  { format: "gif", mime: "image/gif", extension: "gif" },
  { format: "avif", mime: "image/avif", extension: "avif" },
] as const

/** A PNG chunk: length, type, data, CRC over type and data. */
const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A tiny PNG whose header declares width×height, with a few rows of real compressed data. */
const pngDeclaring = (width: number, height: number) => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.writeUInt8(8, 8) // bit depth
  ihdr.writeUInt8(0, 9) // greyscale
  const rows = Buffer.alloc((width + 1) * 4) // four rows of filter byte 0 + zero pixels
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ])
}

describe("sharpImageInspector", () => {
  for (const { format, mime, extension } of formats) {
    it(`should accept a real ${format} image and re-encode it as ${format}`, async () => {
      const input = await solid(40, 30).toFormat(format).toBuffer()
      const image = await inspect(input)
      expect(image.contentType).toBe(mime)
      expect(image.extension).toBe(extension)
      expect([image.width, image.height]).toEqual([40, 30])
      expect((await fileTypeFromBuffer(image.bytes))?.mime).toBe(mime)
    })

    it(`should refuse a truncated ${format} image as unsupported`, async () => {
      const input = await solid(120, 90).toFormat(format).toBuffer()
      const error = await refusal(input.subarray(0, Math.floor(input.length * 0.6)))
      expect(error._tag).toBe("UnsupportedImage")
    })
  }

  it("should inspect many images at once through one layer", async () => {
    const inputs = await Promise.all(formats.map(({ format }) => solid(24, 24).toFormat(format).toBuffer()))
    const images = await Effect.runPromise(
      Effect.gen(function* () {
        const inspector = yield* ImageInspector
        return yield* Effect.all([...inputs, ...inputs].map((b, n) => inspector.inspect(b, `acc_${n}`)), { concurrency: "unbounded" })
      }).pipe(Effect.provide(sharpImageInspector)),
    )
    expect(images.map((i) => i.contentType)).toEqual([...formats, ...formats].map((f) => f.mime))
  })

  it("should strip EXIF and other metadata and apply the EXIF orientation", async () => {
    const input = await solid(40, 30)
      .jpeg()
      .withExif({ IFD0: { Copyright: "secret-owner", Artist: "someone@example.com" } })
      .withMetadata({ orientation: 6 })
      .toBuffer()
    expect((await sharp(input).metadata()).exif).toBeDefined()
    const image = await inspect(input)
    const meta = await sharp(image.bytes).metadata()
    expect(meta.exif).toBeUndefined()
    expect(meta.icc).toBeUndefined()
    expect(Buffer.from(image.bytes).includes("secret-owner")).toBe(false)
    expect([image.width, image.height]).toEqual([30, 40])
  })

  it("should store only what sharp wrote, dropping bytes appended after a valid image", async () => {
    const png = await solid(20, 20).png().toBuffer()
    const polyglot = Buffer.concat([png, Buffer.from("<html><script>alert(1)</script></html>")])
    const image = await inspect(polyglot)
    expect(image.contentType).toBe("image/png")
    expect(Buffer.from(image.bytes).includes("<script>")).toBe(false)
  })

  it("should keep the first frame of an animated GIF", async () => {
    const frames = await Promise.all(["#f00", "#0f0", "#00f"].map((c) => sharp({ create: { width: 16, height: 12, channels: 3, background: c } }).png().toBuffer()))
    const animated = await sharp(frames, { join: { animated: true } }).gif({ delay: [100, 100, 100] }).toBuffer()
    expect((await sharp(animated).metadata()).pages).toBe(3)
    const image = await inspect(animated)
    expect([image.width, image.height]).toEqual([16, 12])
    expect((await sharp(image.bytes).metadata()).pages ?? 1).toBe(1)
  })

  it("should accept an animated PNG (APNG) as a PNG, keeping its default image", async () => {
    const png = await solid(16, 12).png().toBuffer()
    const actl = Buffer.alloc(8)
    actl.writeUInt32BE(1, 0) // one frame
    actl.writeUInt32BE(0, 4) // looping forever
    // acTL right after the signature and IHDR: a PNG that file-type calls 'image/apng'.
    const apng = Buffer.concat([png.subarray(0, 33), chunk("acTL", actl), png.subarray(33)])
    expect((await fileTypeFromBuffer(apng))?.mime).toBe("image/apng")
    const image = await inspect(apng)
    expect(image.contentType).toBe("image/png")
    expect(image.extension).toBe("png")
    expect([image.width, image.height]).toEqual([16, 12])
  })

  it("should refuse SVG, with or without an XML declaration", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'
    expect((await refusal(Buffer.from(svg)))._tag).toBe("UnsupportedImage")
    expect((await refusal(Buffer.from(`<?xml version="1.0"?>${svg}`)))._tag).toBe("UnsupportedImage")
  })

  it("should refuse an SVG that sharp itself could render, since only the bytes decide", async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')
    expect((await sharp(svg).metadata()).format).toBe("svg")
    expect((await refusal(svg))._tag).toBe("UnsupportedImage")
  })

  it("should refuse an HTML page whatever it was called", async () => {
    const error = await refusal(Buffer.from("<!doctype html><html><body><img src=x onerror=alert(1)></body></html>"))
    expect(error._tag).toBe("UnsupportedImage")
  })

  it("should refuse a PNG signature followed by junk", async () => {
    const junk = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("<svg onload=alert(1)>".repeat(20))])
    expect((await refusal(junk))._tag).toBe("UnsupportedImage")
  })

  it("should refuse a GIF header followed by script (a GIF/JS polyglot)", async () => {
    const polyglot = Buffer.from("GIF89a/*\x01\x00\x01\x00\x00\x00\x00*/=1;alert(document.domain);//")
    expect((await refusal(polyglot))._tag).toBe("UnsupportedImage")
  })

  it("should refuse a decodable format that is not accepted (TIFF)", async () => {
    const tiff = await solid(10, 10).tiff().toBuffer()
    expect((await refusal(tiff))._tag).toBe("UnsupportedImage")
  })

  it("should refuse empty input and random bytes", async () => {
    expect((await refusal(new Uint8Array(0)))._tag).toBe("UnsupportedImage")
    expect((await refusal(new Uint8Array(4096).map((_, i) => (i * 7919) % 251)))._tag).toBe("UnsupportedImage")
  })

  it("should refuse a decompression bomb from its header, before decoding pixels", async () => {
    const bomb = pngDeclaring(20000, 20000)
    expect(bomb.length).toBeLessThan(1024)
    const error = await refusal(bomb)
    expect(error._tag).toBe("PayloadTooLarge")
  })

  it("should refuse an image wider than 8000 px even when its pixel count is small", async () => {
    const wide = await sharp({ create: { width: 8001, height: 2, channels: 3, background: "#000" } }).png().toBuffer()
    expect((await refusal(wide))._tag).toBe("PayloadTooLarge")
    const tall = pngDeclaring(4, 8001)
    expect((await refusal(tall))._tag).toBe("PayloadTooLarge")
  })

  it("should accept an image of exactly 8000 px on a side", async () => {
    const edge = await sharp({ create: { width: 8000, height: 2, channels: 3, background: "#000" } }).png().toBuffer()
    const image = await inspect(edge)
    expect([image.width, image.height]).toEqual([8000, 2])
  })

  it("should refuse more than 10 MiB before looking at the bytes", async () => {
    const png = await solid(10, 10).png().toBuffer()
    const big = new Uint8Array(10 * 1024 * 1024 + 1)
    big.set(png)
    expect((await refusal(big))._tag).toBe("PayloadTooLarge")
  })

  it("should never store more than 10 MiB: an image whose re-encoding outgrows the limit is refused", async () => {
    // 8000×8000 two-colour noise as a 1-bit palette PNG with transparency: about 8 MB, under the
    // limit, but sharp writes it back as 8-bit RGBA, which deflate cannot bring under 10 MiB.
    const width = 8000
    const height = 8000
    const ihdr = Buffer.alloc(13)
    ihdr.writeUInt32BE(width, 0)
    ihdr.writeUInt32BE(height, 4)
    ihdr.writeUInt8(1, 8) // bit depth
    ihdr.writeUInt8(3, 9) // palette
    const stride = width / 8 + 1
    const rows = randomBytes(stride * height)
    for (let y = 0; y < height; y++) rows[y * stride] = 0 // filter byte: none
    const noise = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("PLTE", Buffer.from([250, 10, 130, 5, 240, 60])),
      chunk("tRNS", Buffer.from([255, 100])),
      chunk("IDAT", deflateSync(rows, { level: 1 })),
      chunk("IEND", Buffer.alloc(0)),
    ])
    expect(noise.length).toBeLessThan(10 * 1024 * 1024)
    const error = await refusal(noise)
    expect(error._tag).toBe("PayloadTooLarge")
  }, 60_000)

  it("should refuse with PayloadTooLarge an image that takes longer than its time budget, and keep the event loop free meanwhile", async () => {
    // 8000×8000 noise as a progressive JPEG of about 9 MB: 64 million pixels to decode (every scan
    // of the whole image first) and re-encode, about 1.2 s on an idle 2-core machine of 2026. The
    // budget is a quarter of a second (the process is killed half a second after it), so a machine
    // several times faster still runs over it. (A baseline JPEG of 2 MB took 0.45 s there: under
    // a budget of 1 s, this test passed only on a loaded machine.)
    const side = 8000
    const raw = Buffer.alloc(side * side * 3)
    for (let i = 0; i + 4 <= raw.length; i += 4) raw.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i)
    const bomb = await sharp(raw, { raw: { width: side, height: side, channels: 3 } }).jpeg({ quality: 16, progressive: true }).toBuffer()
    expect(bomb.byteLength).toBeLessThan(10 * 1024 * 1024)
    let done = false
    const work = Effect.runPromise(
      Effect.flip(ImageInspector.use((i) => i.inspect(bomb, "acc_a"))).pipe(Effect.provide(makeSharpImageInspector({ seconds: 0.25 }))),
    ).finally(() => (done = true))
    // Decoding runs in another process: the next turn of the event loop comes long before a decode
    // that outlives its 0.25 s budget ends. An order, not a count of turns (which depends on speed).
    const turned = new Promise<boolean>((resolve) => setImmediate(() => resolve(!done)))
    const error = await work
    expect(error._tag).toBe("PayloadTooLarge")
    expect(error).toMatchObject({ detail: expect.stringMatching(/more than 0\.25 s/) })
    expect(await turned).toBe(true)
  }, 120_000)

  it("should stop an AVIF whose decoder cannot be interrupted by killing its process", async () => {
    // One colour, 6000×6000: a few hundred bytes that take seconds to decode, in one libheif call
    // that libvips' own timeout cannot stop: only killing the process ends it within the budget.
    const bomb = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: "#336699" } }).avif({ quality: 50, effort: 0 }).toBuffer()
    expect(bomb.byteLength).toBeLessThan(10_000)
    const killed: Array<number> = []
    const error = await Effect.runPromise(
      Effect.flip(ImageInspector.use((i) => i.inspect(bomb, "acc_a"))).pipe(
        Effect.provide(makeSharpImageInspector({ seconds: 0.5, concurrent: 1, onKilled: (s) => killed.push(s) })),
      ),
    )
    expect(error._tag).toBe("PayloadTooLarge")
    expect(error).toMatchObject({ detail: expect.stringMatching(/more than 0\.5 s/) })
    expect(killed).toEqual([0.5])
  }, 120_000)

  it("should refuse an image whose decoding process dies under it (a decoder crash, the OOM killer), never as a defect", async () => {
    const bomb = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: "#abcdef" } }).avif({ quality: 50, effort: 0 }).toBuffer()
    const imageChildren = async (): Promise<Array<number>> => {
      const out = await new Promise<string>((resolve) => execFile("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], (_e, stdout) => resolve(stdout)))
      return out.split("\n").filter((l) => l.includes("imageProcess")).map((l) => Number.parseInt(l.trim(), 10))
    }
    // Another pool's processes (an earlier test's, killed at its close but not yet gone) are not this one's.
    const before = new Set(await imageChildren())
    // what the server counts (content_site_pool_restarts_total) and logs
    const ended: Array<string> = []
    const work = Effect.runPromiseExit(
      Effect.flip(ImageInspector.use((i) => i.inspect(bomb, "acc_a"))).pipe(Effect.provide(makeSharpImageInspector({ seconds: 30, concurrent: 1, onEnded: (exit) => ended.push(exit) }))),
    )
    // The pool's processes are this process's children; the one decoding started first (the
    // spare is forked only once the first has started and taken the job), so it has the earliest
    // start time. Not the lowest pid: pids wrap (at 32768 on a machine like CI's), and a spare
    // forked after the wrap has the lower one.
    const startTime = (pid: number): number => {
      // field 22, counted after the command's closing bracket (the name may hold spaces)
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19])
    }
    const decoding = async (): Promise<number | undefined> => {
      const pids = (await imageChildren()).filter((pid) => !before.has(pid))
      if (pids.length < 2) return undefined
      const started = pids.map((pid) => ({ pid, at: startTime(pid) }))
      return started.reduce((a, b) => (b.at < a.at ? b : a)).pid
    }
    let pid: number | undefined
    // (the job is sent before the spare is started: once there are two, the first holds the image)
    // (bounded within the test's time, so that a body left running cannot kill the next file's processes)
    const deadline = Date.now() + 90_000
    while ((pid = await decoding()) === undefined) {
      if (Date.now() > deadline) throw new Error("gave up waiting for the decoding process")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    process.kill(pid, "SIGKILL")
    const exit = await work
    expect(Exit.isSuccess(exit)).toBe(true)
    if (Exit.isSuccess(exit)) expect(exit.value._tag).toBe("UnsupportedImage")
    expect(ended).toEqual(["SIGKILL"])
  }, 120_000)

  it("should not hand an image to an idle process that has ended: it is replaced, and the next image is read as usual", async () => {
    const png = await solid(40, 30).png().toBuffer()
    const runtime = ManagedRuntime.make(makeSharpImageInspector({ seconds: 2, concurrent: 1 }))
    const children = async (): Promise<Array<number>> => {
      const out = await new Promise<string>((resolve) => execFile("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], (_e, stdout) => resolve(stdout)))
      return out.split("\n").filter((l) => l.includes("imageProcess")).map((l) => Number.parseInt(l.trim(), 10))
    }
    // Another pool's processes (an earlier test's, killed at its close but not yet gone) are not this one's.
    const before = new Set(await children())
    const ours = async () => (await children()).filter((pid) => !before.has(pid))
    // The waits end before the test's own time does: a body left running past it would find the
    // next file's processes (children of this worker too) "ours" and kill them.
    const deadline = Date.now() + 90_000
    const pause = async (what: string) => {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    try {
      await runtime.runPromise(ImageInspector.use((i) => i.inspect(png, "acc_a")))
      // the process that read it and the spare started meanwhile, both idle: both end
      let idle: Array<number> = []
      while ((idle = await ours()).length < 2) await pause("the pool's two processes")
      for (const pid of idle) process.kill(pid, "SIGKILL")
      while ((await children()).some((pid) => idle.includes(pid))) await pause("the killed processes to end")
      const again = await runtime.runPromiseExit(ImageInspector.use((i) => i.inspect(png, "acc_a")))
      expect(Exit.isSuccess(again) ? [again.value.width, again.value.height] : again).toEqual([40, 30])
    } finally {
      await runtime.dispose()
    }
  }, 120_000)

  it("should go on inspecting images after a process was killed for its time", async () => {
    const slow = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: "#123456" } }).avif({ quality: 50, effort: 0 }).toBuffer()
    const png = await solid(40, 30).png().toBuffer()
    const layer = makeSharpImageInspector({ seconds: 0.5, concurrent: 1 })
    const [first, second] = await Effect.runPromise(
      Effect.all([Effect.flip(ImageInspector.use((i) => i.inspect(slow, "acc_a"))), ImageInspector.use((i) => i.inspect(png, "acc_a"))], { concurrency: 2 }).pipe(Effect.provide(layer)),
    )
    expect(first._tag).toBe("PayloadTooLarge")
    expect([second.width, second.height]).toEqual([40, 30])
  }, 120_000)

  it("should share the decoders fairly: an account past its cap alone is refused, and another account's image does not wait behind its bombs", async () => {
    const bomb = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: "#654321" } }).avif({ quality: 50, effort: 0 }).toBuffer()
    const png = await solid(40, 30).png().toBuffer()
    const killed: Array<number> = []
    const answered: Array<string> = []
    // the bombs' budget: a fraction of what one takes to decode here (seconds), like the tests above
    const budget = 0.5
    const layer = makeSharpImageInspector({ seconds: budget, concurrent: 2, onKilled: (s) => killed.push(s) })
    const note = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) => Effect.ensuring(effect, Effect.sync(() => answered.push(name)))
    const runtime = ManagedRuntime.make(layer)
    // Both decoding processes started first (two other accounts' images at once): the order below
    // is the queue's, not how long a process takes to start on a loaded machine (there, the PNG's
    // own start once outlasted a bomb's budget).
    const warm = await runtime.runPromise(Effect.all(["acc_warm1", "acc_warm2"].map((owner) => ImageInspector.use((i) => i.inspect(png, owner))), { concurrency: "unbounded" }))
    expect(warm).toHaveLength(2)
    const outcomes = await runtime
      .runPromise(
        Effect.all(
          [
            ...[1, 2, 3, 4].map((n) => note(`bomb${n}`, Effect.result(ImageInspector.use((i) => i.inspect(bomb, "acc_bombs"))))),
            note("png", Effect.result(ImageInspector.use((i) => i.inspect(png, "acc_other")))),
          ],
          { concurrency: "unbounded" },
        ),
      )
      .finally(() => runtime.dispose())
    const tags = outcomes.map((o) => (o._tag === "Success" ? "stored" : o.failure._tag))
    // Two of the account's four bombs are taken (one decoding, one waiting), two refused at once;
    // which two is the order their headers were read in, not fixed.
    expect(tags.slice(0, 4).sort()).toEqual(["PayloadTooLarge", "PayloadTooLarge", "RateLimited", "RateLimited"])
    expect(tags[4]).toBe("stored")
    const refused = [1, 2, 3, 4].filter((n) => tags[n - 1] === "RateLimited")
    for (const n of refused) {
      const limited = outcomes[n - 1]!
      expect(limited._tag === "Failure" && limited.failure._tag === "RateLimited" && limited.failure.retryAfterSeconds).toBe(budget)
    }
    // Each bomb is stopped at its budget: by killing its process, or by libvips' own timeout
    // when the decode itself ended in time and a later step ran over (which of the two depends
    // on the machine's speed, so only the budget is asserted).
    expect(killed.length).toBeLessThanOrEqual(2)
    for (const seconds of killed) expect(seconds).toBe(budget)
    // The other account's image took the process the bombs' account may not hold: answered before
    // either bomb was stopped (each bomb runs its whole budget; the PNG is a few milliseconds).
    expect([...answered.slice(0, 3)].sort()).toEqual([...refused.map((n) => `bomb${n}`), "png"].sort())
  }, 120_000)
})
