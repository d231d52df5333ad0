// A raw SMTP client that is never the bottleneck: one socket reused for every
// message, MAIL/RCPT/DATA sent in one write when the server offers PIPELINING,
// replies matched to commands in order.
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

  return {
    pipelining,
    /**
     * Sends one message (a Buffer or string ending in CRLF, no dot-stuffing
     * needed). `onDataEnd` runs right after the final `.` is written.
     */
    async send(message, { from = 'sender@example.com', to = 'inbox@example.com', onDataEnd } = {}) {
      const commands = [`MAIL FROM:<${from}>\r\n`, `RCPT TO:<${to}>\r\n`, 'DATA\r\n']
      const codes = [250, 250, 354]
      if (pipelining) {
        const replies = codes.map(() => reply())
        socket.write(commands.join(''))
        for (let i = 0; i < codes.length; i++) await expect(replies[i], codes[i])
      } else {
        for (let i = 0; i < codes.length; i++) {
          const answer = reply()
          socket.write(commands[i])
          await expect(answer, codes[i])
        }
      }
      const accepted = reply()
      socket.write(message)
      socket.write('.\r\n')
      onDataEnd?.()
      return expect(accepted, 250)
    },
    close() {
      socket.end('QUIT\r\n')
    },
  }
}

/** Sends `count` messages over `connections` sessions; `message(n)` builds message n. */
export async function sendAll(port, { count, connections, message }) {
  const clients = await Promise.all(Array.from({ length: connections }, () => connectSmtp(port)))
  let next = 0
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (next < count) await client.send(message(next++))
      }),
    )
  } finally {
    for (const client of clients) client.close()
  }
}
