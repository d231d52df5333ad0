import { connect } from 'node:net'

/*
 * A minimal client of spamd's protocol (SPAMC/1.5, the REPORT command), as
 * SpamAssassin documents it (spamd/PROTOCOL in its sources). The npm clients
 * of it are unmaintained 0.0.x callback APIs, and the part svc needs is one
 * request and one reply: the message out, the score and the report's rule
 * table back.
 */

/** `GET /api/email/:id/spam-check` */
export interface SpamCheckResult {
  score: number
  required: number
  isSpam: boolean
  rules: Array<{ name: string; score: number; description: string }>
}

/** spamd answered in a way that is not the protocol, or not at all. */
class SpamdError extends Error {}

/** Longest svc waits for spamd's whole answer by default (`--spamassassin-timeout`); scoring a message takes it a second or two. */
export const SPAMD_TIMEOUT_MS = 30_000
/**
 * Larger mail is not sent to spamd, as spamc (SpamAssassin's own client) does
 * by default: scoring takes spamd minutes for a message of megabytes (over
 * two for 20 MB), holding one of its children all along.
 */
export const SPAMD_MAX_MESSAGE_BYTES = 500 * 1024
/** A report is a few KB; anything far beyond is not spamd. */
const REPLY_LIMIT = 1024 * 1024

/** `host:port` as `--spamassassin` gives it; `[::1]:783` for IPv6. */
export function parseSpamdAddress(value: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim())
  const port = Number(match?.[3])
  if (!match || port < 1 || port > 65535) return undefined
  return { host: (match[1] ?? match[2])!, port }
}

/**
 * Scores `raw` with the spamd at host:port. `timeoutMs` bounds the whole
 * exchange, connecting included: a spamd that trickles its answer is cut
 * off as one that says nothing.
 */
export function spamdReport(address: { host: string; port: number }, raw: Buffer, timeoutMs: number): Promise<SpamCheckResult> {
  return new Promise((resolve, reject) => {
    const socket = connect(address)
    const chunks: Buffer[] = []
    let length = 0
    const deadline = setTimeout(() => socket.destroy(new SpamdError(`spamd at ${address.host}:${address.port} did not answer within ${timeoutMs / 1000} s`)), timeoutMs)
    socket.once('close', () => clearTimeout(deadline))
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      length += chunk.length
      if (length > REPLY_LIMIT) socket.destroy(new SpamdError('spamd answered more than 1 MB: is it spamd?'))
    })
    socket.once('error', (error) => reject(error instanceof SpamdError ? error : new SpamdError(`spamd at ${address.host}:${address.port}: ${error.message}`)))
    socket.once('end', () => {
      try {
        resolve(parseReport(Buffer.concat(chunks).toString('utf8')))
      } catch (error) {
        reject(error)
      }
    })
    socket.write(`REPORT SPAMC/1.5\r\nContent-length: ${raw.length}\r\n\r\n`)
    socket.end(raw)
  })
}

/**
 * `SPAMD/1.1 0 EX_OK`, headers with `Spam: True ; 5.1 / 5.0`, then the
 * report, whose table lists each rule that hit:
 * ` 2.7 MISSING_DATE           Missing Date: header` (a long description
 * goes on in the lines under it).
 */
function parseReport(reply: string): SpamCheckResult {
  const headEnd = reply.indexOf('\r\n\r\n')
  const head = (headEnd < 0 ? reply : reply.slice(0, headEnd)).split('\r\n')
  const status = /^SPAMD\/[\d.]+ (\d+) (.*)$/.exec(head[0] ?? '')
  if (!status) throw new SpamdError(`spamd answered ${JSON.stringify((head[0] ?? '').slice(0, 80))}, not the spamd protocol`)
  if (status[1] !== '0') throw new SpamdError(`spamd refused the message: ${status[1]} ${status[2]}`)
  const spam = head.map((line) => /^Spam: *(True|False|Yes|No) *; *(-?[\d.]+) *\/ *(-?[\d.]+)/i.exec(line)).find(Boolean)
  if (!spam) throw new SpamdError('spamd answered without a Spam: header')
  const rules: SpamCheckResult['rules'] = []
  const body = headEnd < 0 ? [] : reply.slice(headEnd + 4).split(/\r?\n/)
  const table = body.findIndex((line) => /^-+ -+ -+/.test(line))
  for (const line of table < 0 ? [] : body.slice(table + 1)) {
    const rule = /^ *(-?\d+(?:\.\d+)?) +(\S+) +(.*)$/.exec(line)
    if (rule) rules.push({ name: rule[2]!, score: Number(rule[1]), description: rule[3]!.trim() })
    else if (/^ {4,}\S/.test(line) && rules.length > 0) rules.at(-1)!.description += ` ${line.trim()}`
    else if (line.trim()) break
  }
  return { score: Number(spam[2]), required: Number(spam[3]), isSpam: /^(true|yes)$/i.test(spam[1]!), rules }
}
