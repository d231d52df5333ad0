// From the moment the final `.` of a message is written to the `newMail`
// event a socket.io-client gets for it, one message at a time.
import { median, percentile } from './http-client.mjs'
import { buildMessage } from './messages.mjs'
import { connectSmtp } from './smtp-client.mjs'

/** Sends `runs` messages (after 20 to warm up) to `smtpPort`; `socket` is connected to the instance to hear them from. */
export async function newMailLatencies(smtpPort, socket, runs) {
  const client = await connectSmtp(smtpPort)
  const times = []
  const warmUp = 20
  for (let n = 0; n < runs + warmUp; n++) {
    let sent = 0
    const subject = `Your order ${n} has shipped`
    const arrived = new Promise((resolve) => {
      const onMail = (summary) => {
        if (summary.subject !== subject) return
        socket.off('newMail', onMail)
        resolve(performance.now())
      }
      socket.on('newMail', onMail)
    })
    await client.send(buildMessage(n, { size: 3000 }), { onDataEnd: () => (sent = performance.now()) })
    const at = await arrived
    if (n >= warmUp) times.push(at - sent)
  }
  client.close()
  return { median: median(times), p99: percentile(times, 99) }
}
