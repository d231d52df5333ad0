// A raw SMTP client that is never the bottleneck: one socket reused for every
// message; with PIPELINING (RFC 2920) MAIL, RCPT and DATA go in one write, and
// when sending many, a message's content and final dot go in the same write
// as the next message's MAIL, RCPT and DATA, so each message costs one round
// trip. Replies are matched to commands in order.
import net from 'node:net'

/** Opens a session: banner, EHLO, then `send()` as often as wanted. */
export async function connectSmtp(port, host = '127.0.0.1') {
  const socket = net.connect(port, host)
  socket.setNoDelay(true)
  socket.setEncoding('latin1')
  /** Waiters for replies, oldest first; each gets the code and the reply's text. */
  const waiting = []
  let failure
  let buffered = ''
  let lines = []
  socket.on('data', (chunk) => {
    buffered += chunk
    let end
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      lines.push(line)
      // `250-...` continues a reply, `250 ...` ends it.
      if (line[3] === '-') continue
      const reply = { code: Number(line.slice(0, 3)), text: lines.join('\n') }
      lines = []
      waiting.shift()?.resolve(reply)
    }
  })
  const fail = (error) => {
    failure ??= error
    for (const waiter of waiting.splice(0)) waiter.reject(failure)
  }
  socket.on('error', fail)
  socket.on('close', () => fail(new Error('SMTP connection closed')))

  const reply = () =>
    failure ? Promise.reject(failure) : new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  const expect = async (promise, code) => {
    const got = await promise
    if (got.code !== code) throw new Error(`expected ${code}, got ${got.text}`)
    return got
  }
  await expect(reply(), 220)
  const ehlo = reply()
  socket.write('EHLO bench.test\r\n')
  const pipelining = /^250[ -]PIPELINING$/m.test((await expect(ehlo, 250)).text)

  const ENVELOPE = 'MAIL FROM:<sender@example.com>\r\nRCPT TO:<inbox@example.com>\r\nDATA\r\n'
  /** Replies to MAIL, RCPT and DATA, asked for before the write that carries them. */
  const envelopeReplies = () => [reply(), reply(), reply()]
  const envelopeAccepted = async (replies) => {
    await expect(replies[0], 250)
    await expect(replies[1], 250)
    await expect(replies[2], 354)
  }
  /** Without PIPELINING: one command, one reply. */
  const envelopeStepByStep = async () => {
    for (const [line, code] of [['MAIL FROM:<sender@example.com>', 250], ['RCPT TO:<inbox@example.com>', 250], ['DATA', 354]]) {
      const answer = reply()
      socket.write(`${line}\r\n`)
      await expect(answer, code)
    }
  }

  return {
    pipelining,
    /**
     * Sends one message (a string or bytes ending in CRLF, dot-stuffed) and
     * waits for its 250. `onDataEnd` runs right after the final `.` is
     * written. Bytes are written as they are: a large string would be
     * encoded here, stalling this process's own timers meanwhile.
     */
    async send(message, { onDataEnd } = {}) {
      if (pipelining) {
        const replies = envelopeReplies()
        socket.write(ENVELOPE)
        await envelopeAccepted(replies)
      } else await envelopeStepByStep()
      const accepted = reply()
      if (typeof message === 'string') {
        socket.write(`${message}.\r\n`)
      } else {
        socket.write(message)
        socket.write('.\r\n')
      }
      onDataEnd?.()
      return expect(accepted, 250)
    },
    /** Sends messages while `next()` gives one, chaining envelopes behind contents when pipelining. */
    async sendEach(next) {
      let message = next()
      if (message === undefined) return
      if (!pipelining) {
        for (; message !== undefined; message = next()) await this.send(message)
        return
      }
      let replies = envelopeReplies()
      socket.write(ENVELOPE)
      await envelopeAccepted(replies)
      while (message !== undefined) {
        const following = next()
        const accepted = reply()
        if (following !== undefined) replies = envelopeReplies()
        socket.write(following === undefined ? `${message}.\r\n` : `${message}.\r\n${ENVELOPE}`)
        await expect(accepted, 250)
        if (following !== undefined) await envelopeAccepted(replies)
        message = following
      }
    },
    close() {
      socket.end('QUIT\r\n')
    },
  }
}

/** Sends `count` messages over `connections` sessions; `message(n)` builds message n. */
export async function sendAll(port, { count, connections, message }) {
  const clients = await Promise.all(Array.from({ length: connections }, () => connectSmtp(port)))
  let sent = 0
  const next = () => (sent < count ? message(sent++) : undefined)
  try {
    await Promise.all(clients.map((client) => client.sendEach(next)))
  } finally {
    for (const client of clients) client.close()
  }
}
