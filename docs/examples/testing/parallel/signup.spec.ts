import { connectInbox, uniqueInbox } from 'svc-mail/testing'
import { afterAll, expect, test } from 'vitest'
import { startSignupApp } from '../signup-app.mjs'

// One svc for every worker (SVC_URL, SVC_SMTP_PORT), an inbox of its own for this file.
const inbox = connectInbox(process.env.SVC_URL!, { inbox: uniqueInbox('signup') })
const smtp = { host: '127.0.0.1', port: Number(process.env.SVC_SMTP_PORT) }
afterAll(() => inbox.stop()) // and the inbox is deleted

test('a new user confirms their address', async () => {
  await using app = await startSignupApp({ smtp })
  await fetch(`${app.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: inbox.address('ann') }) })
  const mail = await inbox.waitFor({ subject: 'Confirm your address' })
  const [confirm] = await inbox.links(mail)
  expect(await (await fetch(confirm!.href)).text()).toContain(`Address confirmed: ${inbox.address('ann')}`)
  // Only this file's mail: the other worker's signups went to its own inbox.
  expect(await inbox.list()).toHaveLength(1)
})
