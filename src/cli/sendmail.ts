import { Readable, Transform } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { Joiner, Splitter } from '@zone-eu/mailsplit'
import nodemailer from 'nodemailer'
import addressparser from 'nodemailer/lib/addressparser'
import { localAddresses } from '../address.js'
import { ConfigError, type SvcConfig } from '../contract/plugin.js'

/** sysexits.h's EX_TEMPFAIL: the caller (a mail queue, PHP, cron) should try again later. */
const EXIT_TEMPFAIL = 75
const EXIT_FAILED = 1

/**
 * The flags sendmail takes that `svc sendmail` reads, and those it accepts
 * and ignores (`-oi`, `-odi`, `-oem`, `-bm`, `-B8BITMIME`, `-F name`),
 * since callers pass them out of habit.
 */
const SENDMAIL_OPTIONS = {
  t: { type: 'boolean' },
  f: { type: 'string' },
  i: { type: 'boolean' },
  F: { type: 'string' },
  o: { type: 'string', multiple: true },
  b: { type: 'string', multiple: true },
  B: { type: 'string' },
  smtp: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

export interface SendmailArgs {
  /** Recipients from the To, Cc and Bcc headers, the Bcc header removed. */
  fromHeaders: boolean
  /** The envelope sender; else the From header's address. */
  sender?: string
  /** `host:port` or a port; else the configured SMTP port on loopback. */
  smtp?: string
  config?: string
  help: boolean
  recipients: string[]
}

/** Reads sendmail's command line; a flag it does not know is a ConfigError. */
export function parseSendmailArgs(args: string[]): SendmailArgs {
  let parsed
  try {
    parsed = parseArgs({ args, options: SENDMAIL_OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new ConfigError([`sendmail: ${(error as Error).message}`])
  }
  const { values, positionals } = parsed
  if (values.b?.some((mode) => mode !== 'm')) throw new ConfigError([`sendmail: only -bm (read a message from standard input) is supported`])
  return { fromHeaders: Boolean(values.t), sender: values.f, smtp: values.smtp, config: values.config, help: Boolean(values.help), recipients: positionals }
}

/** `host:port`, `[::1]:port` or a port alone (on the configured address). */
function smtpTarget(given: string | undefined, config: SvcConfig): { host: string; port: number } {
  const fallback = { host: localAddresses(config.ip)[0]!, port: config.smtp }
  if (given === undefined) return fallback
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(given) ?? /^()()(\d+)$/.exec(given)
  const port = Number(match?.[3])
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError([`--smtp: "${given}" is not host:port or a port`])
  return { host: match[1] || match[2] || fallback.host, port }
}

const addressesOf = (values: string[]) => values.flatMap((value) => addressparser(value, { flatten: true })).map(({ address }) => address).filter(Boolean)

/** The message with its root Bcc header taken out, and the addresses its headers name. */
async function readHeaders(raw: Buffer, dropBcc: boolean): Promise<{ message: Buffer; to: string[]; from?: string }> {
  let to: string[] = []
  let from: string | undefined
  const rewrite = new Transform({
    objectMode: true,
    transform(chunk: { type: string; root?: boolean; headers?: { get(key: string): string[]; remove(key: string): void } }, _encoding, done) {
      if (chunk.type === 'node' && chunk.root && chunk.headers && from === undefined) {
        const { headers } = chunk
        to = addressesOf(['to', 'cc', 'bcc'].flatMap((key) => headers.get(key).map((line) => line.replace(/^[^:]*:/, ''))))
        from = addressesOf(headers.get('from').map((line) => line.replace(/^[^:]*:/, '')))[0] ?? ''
        if (dropBcc) headers.remove('bcc')
      }
      done(null, chunk)
    },
  })
  const joiner = new Joiner()
  const [, message] = await Promise.all([pipeline(Readable.from([raw]), new Splitter(), rewrite, joiner), buffer(joiner)])
  return { message, to, from: from || undefined }
}

export interface SendmailOutcome {
  code: number
  /** One line: what was sent where, or why not. */
  line: string
}

/**
 * Submits one message (the bytes on standard input) to svc's SMTP port,
 * once: the exit code a caller of `/usr/sbin/sendmail` expects back.
 */
export async function sendmail(args: SendmailArgs, config: SvcConfig, input: Buffer): Promise<SendmailOutcome> {
  const { host, port } = smtpTarget(args.smtp, config)
  const { message, to, from } = await readHeaders(input, args.fromHeaders)
  const recipients = args.fromHeaders ? [...args.recipients, ...to] : args.recipients
  if (recipients.length === 0) {
    return { code: EXIT_FAILED, line: args.fromHeaders ? 'no recipient: To, Cc and Bcc are empty' : 'no recipient: name one, or read them from the headers with -t' }
  }
  const transport = nodemailer.createTransport({
    host,
    port,
    secure: config.incomingSecure,
    // svc on this machine, often with a self-signed certificate: the point is to hand it the message.
    tls: { rejectUnauthorized: false },
    ...(config.incomingUser ? { auth: { user: config.incomingUser, pass: config.incomingPass } } : {}),
  })
  try {
    const info = await transport.sendMail({ envelope: { from: args.sender ?? from ?? '', to: recipients }, raw: message })
    return { code: 0, line: `sent to ${recipients.join(', ')} via ${host}:${port}: ${info.response}` }
  } catch (error) {
    const { responseCode, response, code, message: reason } = error as { responseCode?: number; response?: string; code?: string; message: string }
    const temporary = responseCode !== undefined && responseCode >= 400 && responseCode < 500
    return { code: temporary ? EXIT_TEMPFAIL : EXIT_FAILED, line: `not sent via ${host}:${port}: ${response ?? (code ? `${code}: ${reason}` : reason)}` }
  } finally {
    transport.close()
  }
}
