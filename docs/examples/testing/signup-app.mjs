// The application under test in docs/testing.md: a signup page that mails a
// confirmation link. Any app works the same way: point its SMTP settings at svc.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import nodemailer from 'nodemailer'

const page = (body) => `<!doctype html><html><head><meta charset="utf-8"><title>Signup</title></head><body>${body}</body></html>`
const escape = (text) => text.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`)

/** Starts the app on a free loopback port; `smtp` is where it sends mail. Resolves `{ url, close() }`. */
export async function startSignupApp({ smtp }) {
  const mailer = nodemailer.createTransport({ host: smtp.host, port: smtp.port })
  const tokens = new Map()
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://app.invalid')
    const send = (status, body) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(page(body))
    if (req.method === 'GET' && url.pathname === '/') {
      return send(200, '<form method="post" action="/signup"><label>Email <input name="email" type="email"></label><button>Sign up</button></form>')
    }
    if (req.method === 'POST' && url.pathname === '/signup') {
      let form = ''
      for await (const chunk of req) form += chunk
      const email = new URLSearchParams(form).get('email') ?? ''
      const token = randomBytes(12).toString('hex')
      tokens.set(token, email)
      const link = `${origin}/confirm?token=${token}`
      await mailer.sendMail({
        from: 'Example App <noreply@app.example>',
        to: email,
        subject: 'Confirm your address',
        text: `Welcome! Confirm your address: ${link}`,
        html: `<p>Welcome!</p><p><a href="${link}">Confirm your address</a> or <a href="${origin}/help">ask for help</a>.</p>`,
      })
      return send(200, `<p>Check your inbox, ${escape(email)}.</p>`)
    }
    if (req.method === 'GET' && url.pathname === '/confirm' && tokens.has(url.searchParams.get('token'))) {
      const email = tokens.get(url.searchParams.get('token'))
      tokens.delete(url.searchParams.get('token'))
      return send(200, `<h1>Address confirmed: ${escape(email)}</h1>`)
    }
    send(404, '<p>Not found</p>')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${server.address().port}`
  const close = async () => {
    mailer.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return { url: origin, close, [Symbol.asyncDispose]: close }
}
