// The memory bound of docs/security.md, held for minutes: `npm run bench -- --only memoryFlood`
// (SVC_BENCH_FLOOD_SECONDS, default 600). svc runs with --max-emails 2 and a webhook that never
// answers; five Socket.IO clients join and then never read; messages of 20 MiB with a 1 MB subject
// arrive without pause. RSS must stay under 600 MiB, svc must stay up and list the two newest.
import { createServer } from 'node:http'
import net from 'node:net'
import { sampleRss, startSvc } from './child.mjs'
import { buildLargeMessage } from './messages.mjs'
import { connectSmtp } from './smtp-client.mjs'

const MiB = 1024 * 1024

/** One WebSocket frame from the client (masked, as clients must), small text only. */
const clientFrame = (text) => {
  const payload = Buffer.from(text)
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload])
}

/** A Socket.IO client over a raw WebSocket that joins the default namespace, then never reads again. */
async function silentClient(baseUrl) {
  const { hostname, port } = new URL(baseUrl)
  const socket = net.connect({ host: hostname, port: Number(port) })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(
    'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  )
  await new Promise((resolve) => socket.once('data', resolve))
  socket.write(clientFrame('40'))
  // From here on nothing is read: what svc sends piles up in its buffers until it drops this client.
  socket.pause()
  return socket
}

export async function memoryFlood({ seconds }) {
  // A webhook endpoint that takes each request and never answers.
  const held = []
  const hook = createServer((req) => held.push(req))
  await new Promise((resolve) => hook.listen(0, '127.0.0.1', resolve))
  const svc = await startSvc(['--max-emails', '2', '--webhook', `http://127.0.0.1:${hook.address().port}/hook`])
  const clients = []
  try {
    for (let n = 0; n < 5; n++) clients.push(await silentClient(svc.baseUrl))
    const subject = Array.from({ length: 14_000 }, (_, n) => `word${n}`).join('\r\n ')
    const message = buildLargeMessage(20 * MiB).replace('Subject: A large attachment', `Subject: ${subject}`)
    const sampler = sampleRss(svc.pid, 50)
    const client = await connectSmtp(svc.smtpPort)
    const ends = Date.now() + seconds * 1000
    let sent = 0
    try {
      while (Date.now() < ends) {
        await client.send(message)
        sent++
      }
    } finally {
      client.close()
    }
    const peak = sampler.stop()
    const health = await svc.api('/api/healthz')
    const { storeTotal } = await svc.json('/api/email/summary?limit=2')
    if (!health.ok || storeTotal !== 2) throw new Error(`memoryFlood: healthz ${health.status}, ${storeTotal} listed`)
    return { floodRss: peak / MiB, floodMessages: sent }
  } finally {
    for (const socket of clients) socket.destroy()
    await svc.stop()
    for (const req of held) req.socket.destroy()
    await new Promise((resolve) => hook.close(resolve))
  }
}
