import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { Svc, type SvcOptions } from '../../src/index.js'

export interface TestSvc {
  svc: Svc
  smtpPort: number
  /** The web root with the base pathname, e.g. http://127.0.0.1:51234/mail */
  baseUrl: string
  /** fetch relative to baseUrl. */
  api(path: string, init?: RequestInit): Promise<Response>
  /** Sends one message over real SMTP and resolves once svc has stored it. */
  send(message: Mail.Options, transport?: Record<string, unknown>): Promise<{ id: string }>
  stop(): Promise<void>
}

/** Starts svc on free loopback ports, silent, with the given options. */
export async function startSvc(options: SvcOptions = {}): Promise<TestSvc> {
  const svc = new Svc({ smtp: 0, web: 0, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true, ...options })
  await svc.start()
  const smtpPort = svc.smtp.port
  const baseUrl = svc.http.url.replace('localhost', '127.0.0.1')
  return {
    svc,
    smtpPort,
    baseUrl,
    api: (path, init) => fetch(`${baseUrl}${path}`, init),
    async send(message, transport = {}) {
      const received = new Promise<{ id: string }>((resolve) => svc.smtp.once('new', (email) => resolve({ id: email.id })))
      const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, ...transport })
      try {
        await mailer.sendMail({ from: 'Sender <sender@example.com>', to: 'rcpt@example.com', subject: 'Hello', text: 'Hi', ...message })
      } finally {
        mailer.close()
      }
      return received
    },
    stop: () => svc.stop(),
  }
}
