// SMTP intake throughput: 1,000 small messages over 4 reused connections.
// Run against the build: `npm run build && node bench/intake.mjs [messages] [connections]`.
import net from 'node:net'
import { Svc } from '../dist/src/index.js'

const MESSAGES = Number(process.argv[2] ?? 1000)
const CONNECTIONS = Number(process.argv[3] ?? 4)

/** A minimal SMTP client: one socket, one command at a time, replies read line by line. */
async function connect(port) {
  const socket = net.connect(port, '127.0.0.1')
  socket.setNoDelay(true)
  socket.setEncoding('latin1')
  let buffered = ''
  let waiting
  socket.on('data', (chunk) => {
    buffered += chunk
    // A reply ends with a line whose fourth character is a space.
    const match = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n$/.exec(buffered)
    if (!match) return
    buffered = ''
    const resolve = waiting
    waiting = undefined
    resolve?.(Number(match[1]))
  })
  const reply = () => new Promise((resolve) => (waiting = resolve))
  const expect = async (code) => {
    const got = await reply()
    if (got !== code) throw new Error(`expected ${code}, got ${got}`)
  }
  const send = (line, code) => {
    const answer = expect(code)
    socket.write(line)
    return answer
  }
  await expect(220)
  await send('EHLO bench.test\r\n', 250)
  return {
    async mail(n) {
      await send('MAIL FROM:<bench@example.com>\r\n', 250)
      await send('RCPT TO:<inbox@example.com>\r\n', 250)
      await send('DATA\r\n', 354)
      await send(message(n), 250)
    },
    close: () => socket.end('QUIT\r\n'),
  }
}

function message(n) {
  return [
    'From: Bench <bench@example.com>',
    'To: Inbox <inbox@example.com>',
    `Subject: Benchmark message ${n}`,
    `Message-ID: <bench-${n}@example.com>`,
    'Date: Mon, 06 May 2024 07:08:09 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Hello, this is message ${n}. ${'Lorem ipsum dolor sit amet. '.repeat(8)}`,
    '.',
    '',
  ].join('\r\n')
}

const svc = new Svc({ smtp: 0, web: 0, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true })
const { smtp, storage } = await svc.start()
const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => connect(smtp.port)))
const stored = new Promise((resolve) => smtp.on('new', () => storage.size >= MESSAGES && resolve()))

let next = 0
const started = performance.now()
await Promise.all(
  clients.map(async (client) => {
    while (next < MESSAGES) await client.mail(next++)
  }),
)
await stored
const seconds = (performance.now() - started) / 1000
for (const client of clients) client.close()
await svc.stop()

console.log(`${MESSAGES} messages over ${CONNECTIONS} connections in ${seconds.toFixed(2)} s: ${Math.round(MESSAGES / seconds)} messages/second`)
