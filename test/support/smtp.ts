import net from 'node:net'

/** One SMTP reply: its code and its text lines without the code. */
export interface SmtpReply {
  code: number
  lines: string[]
}

/** A plain SMTP client on a raw socket, for what nodemailer would sanitize or refuse to send. */
export interface RawSmtp {
  socket: net.Socket
  /** The greeting. */
  greeting: SmtpReply
  /** Sends one line (CRLF added) and resolves the reply to it. */
  command(line: string): Promise<SmtpReply>
  /** Writes bytes as they are. */
  write(data: string | Buffer): void
  /** The next reply from the server. */
  reply(): Promise<SmtpReply>
  /** Resolves once the socket is closed, whoever closed it. */
  closed: Promise<void>
  close(): void
}

export async function connectSmtp(port: number, host = '127.0.0.1'): Promise<RawSmtp> {
  const socket = net.connect(port, host)
  const replies: SmtpReply[] = []
  const waiting: Array<(reply: SmtpReply) => void> = []
  let buffered = ''
  let lines: string[] = []
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    buffered += chunk
    let end: number
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      lines.push(line.slice(4))
      if (line[3] === '-') continue
      const reply = { code: Number(line.slice(0, 3)), lines }
      lines = []
      const next = waiting.shift()
      if (next) next(reply)
      else replies.push(reply)
    }
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.on('error', () => {})
  const reply = () =>
    new Promise<SmtpReply>((resolve, reject) => {
      const queued = replies.shift()
      if (queued) return resolve(queued)
      waiting.push(resolve)
      closed.then(() => reject(new Error('connection closed before a reply')))
    })
  const greeting = await reply()
  return {
    socket,
    greeting,
    command(line) {
      socket.write(`${line}\r\n`)
      return reply()
    },
    write: (data) => void socket.write(data),
    reply,
    closed,
    close: () => socket.destroy(),
  }
}

/** SMTP transparency: a line starting with a dot gets a second one. */
export function dotStuff(data: string | Buffer): Buffer {
  const text = Buffer.isBuffer(data) ? data.toString('latin1') : Buffer.from(data).toString('latin1')
  return Buffer.from(text.replace(/(^|\r\n)\./g, '$1..'), 'latin1')
}

export interface RawTransaction {
  from?: string
  to?: string[]
  /** The message; CRLF line ends expected. Dot-stuffed here. */
  data: string | Buffer
  ehlo?: string
  /** Extra MAIL FROM parameters, e.g. `SMTPUTF8`. */
  mailParams?: string
}

/** One whole transaction on a fresh connection; resolves the first failing reply, or the DATA reply. */
export async function sendRaw(port: number, tx: RawTransaction): Promise<SmtpReply> {
  const smtp = await connectSmtp(port)
  try {
    const steps = [
      `EHLO ${tx.ehlo ?? 'raw.test'}`,
      `MAIL FROM:<${tx.from ?? 'raw@example.com'}>${tx.mailParams ? ` ${tx.mailParams}` : ''}`,
      ...(tx.to ?? ['rcpt@example.com']).map((to) => `RCPT TO:<${to}>`),
      'DATA',
    ]
    for (const step of steps) {
      const reply = await smtp.command(step)
      if (reply.code >= 400) return reply
    }
    const body = dotStuff(tx.data)
    const ending = body.subarray(-2).toString() === '\r\n' ? '.\r\n' : '\r\n.\r\n'
    smtp.write(Buffer.concat([body, Buffer.from(ending)]))
    const reply = await smtp.reply()
    await smtp.command('QUIT').catch(() => undefined)
    return reply
  } finally {
    smtp.close()
  }
}

/** The EHLO reply lines of a fresh connection. */
export async function ehloLines(port: number): Promise<string[]> {
  const smtp = await connectSmtp(port)
  try {
    return (await smtp.command('EHLO raw.test')).lines
  } finally {
    smtp.close()
  }
}
