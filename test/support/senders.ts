import { randomBytes, randomInt } from 'node:crypto'
import { connectSmtp, dotStuff } from './smtp.js'

/** What a sender knows of each message it began: its bytes, and the reply to its data (absent when none came). */
export interface Sent {
  raw: Buffer
  code?: number
}

export interface SequenceOptions {
  /** Prefix of the subjects, which are `<name> n<i>`. */
  name: string
  /** Stop after this many messages; without it, send until the connection fails. */
  count?: number
  /** The message for a subject; CRLF line ends. */
  message?: (subject: string) => Buffer
  /** Filled as messages go out, keyed by subject. */
  sent: Map<string, Sent>
}

/** A small message, distinct per subject. */
export const smallMessage = (subject: string): Buffer =>
  Buffer.from(`From: load@example.com\r\nTo: rcpt@example.com\r\nSubject: ${subject}\r\n\r\nBody of ${subject}\r\n`)

/** A message of 1 KB to 200 KB of random words: large ones are still being written when a kill comes. */
export function sizedMessage(subject: string): Buffer {
  const lines = Array.from({ length: randomInt(10, 2000) }, () => randomBytes(75).toString('base64'))
  return Buffer.from(`From: load@example.com\r\nTo: rcpt@example.com\r\nSubject: ${subject}\r\n\r\n${lines.join('\r\n')}\r\n`)
}

/**
 * One SMTP connection sending messages one after another, as an application's
 * mailer does. A failed connection or a refused command ends it quietly: the
 * callers judge by what `sent` holds.
 */
export async function sendSequence(port: number, { name, count = Number.POSITIVE_INFINITY, message = smallMessage, sent }: SequenceOptions): Promise<void> {
  const smtp = await connectSmtp(port).catch(() => undefined)
  if (!smtp) return
  try {
    if ((await smtp.command(`EHLO ${name.replace(/\W/g, '-')}.test`)).code !== 250) return
    for (let i = 0; i < count; i++) {
      const subject = `${name} n${i}`
      const raw = message(subject)
      if ((await smtp.command('MAIL FROM:<load@example.com>')).code !== 250) return
      if ((await smtp.command('RCPT TO:<rcpt@example.com>')).code !== 250) return
      if ((await smtp.command('DATA')).code !== 354) return
      const record: Sent = { raw }
      sent.set(subject, record)
      smtp.write(Buffer.concat([dotStuff(raw), Buffer.from('.\r\n')]))
      record.code = (await smtp.reply()).code
      if (record.code !== 250) return
    }
    await smtp.command('QUIT')
  } catch {
    // The connection ended (a killed or stopping server): what was acknowledged is in `sent`.
  } finally {
    smtp.close()
  }
}

/** Subjects whose message got its 250. */
export const acknowledged = (sent: Map<string, Sent>): string[] => [...sent].filter(([, record]) => record.code === 250).map(([subject]) => subject)

/** A message of one base64 attachment of `attachmentBytes` random bytes, a third more on the wire (too large for a store to pack). */
export function largeMessage(index: number, attachmentBytes: number): Buffer {
  const body = randomBytes(attachmentBytes).toString('base64').replace(/.{76}/g, '$&\r\n')
  return Buffer.from(
    `From: reports@example.com\r\nTo: inbox@example.com\r\nSubject: large ${index}\r\nMIME-Version: 1.0\r\n` +
      'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe export is attached.\r\n' +
      `--b\r\nContent-Type: application/octet-stream; name="export-${index}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n--b--\r\n`,
  )
}
