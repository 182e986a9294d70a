/**
 * A tiny X.509 v3 certificate maker on node:crypto, for local HTTPS test servers: one EC P-256
 * key, self-signed (ecdsa-with-SHA256), valid for the given IP addresses and DNS names.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto"
import { isIPv4 } from "node:net"

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n])
  const bytes: Array<number> = []
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}
const tlv = (tag: number, ...content: Array<Buffer>): Buffer => {
  const body = Buffer.concat(content)
  return Buffer.concat([Buffer.from([tag]), length(body.length), body])
}
const seq = (...c: Array<Buffer>) => tlv(0x30, ...c)
const oid = (dotted: string): Buffer => {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number)
  const out = [40 * a + b]
  for (const n of rest) {
    const groups = [n & 0x7f]
    for (let v = n >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80)
    out.push(...groups)
  }
  return tlv(0x06, Buffer.from(out))
}
const integer = (bytes: Buffer) => tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes)
const utcTime = (d: Date) => tlv(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-:T]/g, "")}Z`, "latin1"))
const name = (cn: string) => seq(tlv(0x31, seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(cn, "utf8")))))

/** A self-signed certificate and its key, both PEM. */
export const selfSignedCertificate = (ips: ReadonlyArray<string>, dnsNames: ReadonlyArray<string> = []) => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const algorithm = seq(oid("1.2.840.10045.4.3.2"))
  const altNames = seq(
    ...ips.map((ip) => tlv(0x87, Buffer.from(isIPv4(ip) ? ip.split(".").map(Number) : []))),
    ...dnsNames.map((d) => tlv(0x82, Buffer.from(d, "latin1"))),
  )
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid("2.5.29.19"), tlv(0x01, Buffer.from([0xff])), tlv(0x04, seq(tlv(0x01, Buffer.from([0xff]))))),
      seq(oid("2.5.29.17"), tlv(0x04, altNames)),
    ),
  )
  const now = Date.now()
  // DER integers must be minimal: a serial starting with 0x00 (1 in 256) is refused as padded.
  const serial = randomBytes(8)
  serial[0] = ((serial[0] ?? 1) & 0x7f) | 0x01
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name("content-site test"),
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 86_400_000))),
    name("content-site test"),
    publicKey.export({ type: "spki", format: "der" }),
    extensions,
  )
  const signature = sign("sha256", tbs, privateKey)
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature))
  const cert = `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`
  return { cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() }
}
