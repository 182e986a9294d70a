import { MediaStore } from "@content-site/core"
import { Effect, Option } from "effect"
import * as fsp from "node:fs/promises"
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { isMediaKey, localMediaStore, type MediaFileSystem } from "../src/index.ts"

let dir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "media-store-"))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The last millisecond of January 2026 (UTC): the store's clock, unless a test passes another. */
const JANUARY_ENDS = Date.UTC(2026, 0, 31, 23, 59, 59, 999)

const withStore = <A, E>(f: (store: MediaStore["Service"]) => Effect.Effect<A, E>, root = dir, now = () => JANUARY_ENDS) =>
  Effect.runPromise(Effect.gen(function* () {
    return yield* f(yield* MediaStore)
  }).pipe(Effect.provide(localMediaStore(root, now))))

const listFiles = async (root: string): Promise<Array<string>> =>
  (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))

describe("localMediaStore", () => {
  it("should store bytes under a YYYY/MM/<random>.<ext> key of the UTC month and give them back with their type", async () => {
    const bytes = new Uint8Array([1, 2, 3, 4])
    const key = await withStore((s) => s.put(bytes, "image/png", "png"))
    expect(key).toMatch(/^2026\/01\/[A-Za-z0-9_-]{22}\.png$/)
    // a millisecond later it is February
    expect(await withStore((s) => s.put(bytes, "image/png", "png"), dir, () => JANUARY_ENDS + 1)).toMatch(/^2026\/02\//)
    const found = await withStore((s) => s.get(key))
    expect(Option.isSome(found)).toBe(true)
    if (Option.isSome(found)) {
      expect([...found.value.bytes]).toEqual([1, 2, 3, 4])
      expect(found.value.contentType).toBe("image/png")
    }
  })

  it("should derive the content type from the extension", async () => {
    for (const [ext, type] of [["jpg", "image/jpeg"], ["webp", "image/webp"], ["gif", "image/gif"], ["avif", "image/avif"]] as const) {
      const key = await withStore((s) => s.put(new Uint8Array([9]), type, ext))
      const found = await withStore((s) => s.get(key))
      expect(Option.getOrThrow(found).contentType).toBe(type)
    }
  })

  it("should remove what a key names, and take a key that names nothing (or no key at all) as removed", async () => {
    const key = await withStore((s) => s.put(new Uint8Array([7]), "image/png", "png"))
    const kept = await withStore((s) => s.put(new Uint8Array([8]), "image/png", "png"))
    await withStore((s) => s.remove(key))
    expect(Option.isNone(await withStore((s) => s.get(key)))).toBe(true)
    expect(Option.isSome(await withStore((s) => s.get(kept)))).toBe(true)
    // again, and keys that cannot name a file: nothing to do, no failure, nothing else touched
    await withStore((s) => Effect.all([s.remove(key), s.remove("../../etc/passwd"), s.remove("2026/01/x.png")]))
    expect(await listFiles(dir)).toHaveLength(1)
  })

  it("should make a new key for every put", async () => {
    const keys = await withStore((s) => Effect.all([1, 2, 3, 4, 5].map(() => s.put(new Uint8Array([0]), "image/gif", "gif"))))
    expect(new Set(keys).size).toBe(5)
  })

  it("should leave no temporary file behind", async () => {
    await withStore((s) => s.put(new Uint8Array(1000), "image/webp", "webp"))
    const files = await listFiles(dir)
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/\.webp$/)
  })

  it("should answer none for unknown and malformed keys", async () => {
    const key = await withStore((s) => s.put(new Uint8Array([1]), "image/png", "png"))
    for (const k of [
      key.replace(/\.png$/, ".gif"),
      "2026/11/AAAAAAAAAAAAAAAAAAAAAA.png",
      "",
      "x",
      `${key}/`,
      `/${key}`,
      key.replace("/", "\\"),
      "2026/13/AAAAAAAAAAAAAAAAAAAAAA.png",
      "2026/11/AAAAAAAAAAAAAAAAAAAAAA.svg",
      "2026/11/AAAAAAAAAAAAAAAAAAAAAA.html",
      "2026/11/AAAAAAAAAAAAAAAAAAAAAA.png.tmp",
    ]) {
      expect(Option.isNone(await withStore((s) => s.get(k))), k).toBe(true)
    }
  })

  it("should not let a key climb out of its folder", async () => {
    const inner = join(dir, "store")
    await mkdir(inner)
    await writeFile(join(dir, "secret.png"), "secret")
    await mkdir(join(dir, "2026", "11"), { recursive: true })
    await writeFile(join(dir, "2026", "11", "AAAAAAAAAAAAAAAAAAAAAA.png"), "outside")
    for (const k of [
      "../secret.png",
      "2026/11/../../../secret.png",
      "../2026/11/AAAAAAAAAAAAAAAAAAAAAA.png",
      "..%2F2026%2F11%2FAAAAAAAAAAAAAAAAAAAAAA.png",
      "2026/11/..%2f..%2fsecret.png",
      join(dir, "secret.png"),
      "2026/11/AAAAAAAAAAAAAAAA\0.png",
    ]) {
      expect(isMediaKey(k), k).toBe(false)
      expect(Option.isNone(await withStore((s) => s.get(k), inner)), k).toBe(true)
    }
  })

  it("should refuse to keep an extension it does not know, as a defect", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        return yield* (yield* MediaStore).put(new Uint8Array([1]), "image/svg+xml", "svg")
      }).pipe(Effect.provide(localMediaStore(dir))),
    )
    expect(exit._tag).toBe("Failure")
    expect(await listFiles(dir)).toEqual([])
  })

  it("should fail with Unavailable when the store path is a file", async () => {
    const file = join(dir, "not-a-folder")
    await writeFile(file, "x")
    const error = await withStore((s) => Effect.flip(s.put(new Uint8Array([1]), "image/png", "png")), file)
    expect(error._tag).toBe("Unavailable")
  })

  describe("durability", () => {
    /**
     * The real file system, each operation noted (`write`, `fsync`, `rename` and `close` with the
     * name of what it touched: the file's, `*.tmp`, or a folder's); `failSync` fails the fsync of
     * the names it matches, as a full or failing disk would.
     */
    const recording = (failSync: (name: string) => boolean = () => false, code = "EIO") => {
      const ops: Array<string> = []
      const nameOf = (path: string) => (/\.tmp$/.test(path) ? "*.tmp" : /\.[a-z]{3,4}$/.test(path) ? "file" : `dir:${path === dir ? "root" : basename(path)}`)
      const fs: MediaFileSystem = {
        mkdir: fsp.mkdir,
        unlink: fsp.unlink,
        rename: async (from, to) => {
          ops.push(`rename ${nameOf(String(from))} -> ${nameOf(String(to))}`)
          return fsp.rename(from, to)
        },
        open: (async (path: string, flags?: string) => {
          const handle = await fsp.open(path, flags)
          const name = nameOf(path)
          const { writeFile: write, sync, close } = handle
          return Object.assign(handle, {
            writeFile: (...args: Parameters<typeof write>) => (ops.push(`write ${name}`), write.apply(handle, args)),
            sync: () => {
              ops.push(`fsync ${name}`)
              return failSync(name) ? Promise.reject(Object.assign(new Error(code), { code })) : sync.apply(handle)
            },
            close: () => (ops.push(`close ${name}`), close.apply(handle)),
          })
        }) as MediaFileSystem["open"],
      }
      return { ops, fs }
    }
    it("should write the file, fsync it, rename it into place and fsync its folder, before it answers", async () => {
      const { ops, fs } = recording()
      const [key, first] = await Effect.runPromise(Effect.gen(function* () {
        const store = yield* MediaStore
        const key = yield* store.put(new Uint8Array([1, 2, 3]), "image/png", "png")
        const first = ops.splice(0)
        yield* store.put(new Uint8Array([4]), "image/png", "png")
        return [key, first] as const
      }).pipe(Effect.provide(localMediaStore(dir, () => JANUARY_ENDS, fs))))
      const fileSteps = ["write *.tmp", "fsync *.tmp", "close *.tmp", "rename *.tmp -> file", "fsync dir:01", "close dir:01"]
      expect(first.slice(first.indexOf("write *.tmp"))).toEqual(fileSteps)
      // the month's and the year's folders, new here, are made durable in their parents too (before the file is written)
      expect(first.slice(0, first.indexOf("write *.tmp"))).toEqual(expect.arrayContaining(["fsync dir:root", "fsync dir:2026"]))
      expect(Option.isSome(await withStore((s) => s.get(key)))).toBe(true)
      // the next put in the same month syncs only its own file and folder
      expect(ops).toEqual(fileSteps)
    })

    it("should fail with Unavailable and leave no file when the file's fsync fails", async () => {
      const { ops, fs } = recording((name) => name === "*.tmp")
      const error = await Effect.runPromise(Effect.flip(Effect.gen(function* () {
        return yield* (yield* MediaStore).put(new Uint8Array([1]), "image/png", "png")
      }).pipe(Effect.provide(localMediaStore(dir, () => JANUARY_ENDS, fs)))))
      expect(error._tag).toBe("Unavailable")
      expect(ops).not.toContain("rename *.tmp -> file")
      expect(await listFiles(dir)).toEqual([])
    })

    it("should fail with Unavailable and take the file back out of its name when the folder's fsync fails", async () => {
      const { fs } = recording((name) => name === "dir:01")
      const error = await Effect.runPromise(Effect.flip(Effect.gen(function* () {
        return yield* (yield* MediaStore).put(new Uint8Array([1]), "image/png", "png")
      }).pipe(Effect.provide(localMediaStore(dir, () => JANUARY_ENDS, fs)))))
      expect(error._tag).toBe("Unavailable")
      expect(await listFiles(dir)).toEqual([])
    })

    it("should store the image when the file system cannot fsync a folder at all (EINVAL), the file itself fsynced", async () => {
      const { ops, fs } = recording((name) => name.startsWith("dir:"), "EINVAL")
      const key = await Effect.runPromise(Effect.gen(function* () {
        return yield* (yield* MediaStore).put(new Uint8Array([1, 2]), "image/png", "png")
      }).pipe(Effect.provide(localMediaStore(dir, () => JANUARY_ENDS, fs))))
      expect(ops).toContain("fsync *.tmp")
      expect(ops).toContain("fsync dir:01")
      expect(Option.isSome(await withStore((s) => s.get(key)))).toBe(true)
    })
  })
})
