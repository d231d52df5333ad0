import { connectInbox, uniqueInbox } from 'svc-mail/testing'
import { afterAll, expect, test } from 'vitest'
import { startSignupApp } from '../signup-app.mjs'

const inbox = connectInbox(process.env.SVC_URL!, { inbox: uniqueInbox('resend') })
const smtp = { host: '127.0.0.1', port: Number(process.env.SVC_SMTP_PORT) }
afterAll(() => inbox.stop())

test('signing up twice mails a second link, and clear() empties this inbox alone', async () => {
  await using app = await startSignupApp({ smtp })
  for (let i = 0; i < 2; i++) {
    await fetch(`${app.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: inbox.address('ann') }) })
  }
  // The app answers once svc took its mail: both are in.
  expect(await inbox.list({ subject: 'Confirm your address' })).toHaveLength(2)
  await inbox.clear()
  expect(await inbox.list()).toEqual([])
})
