import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createTestInbox } from 'svc-mail/testing'
import { startSignupApp } from './signup-app.mjs'

let inbox, app
before(async () => {
  inbox = await createTestInbox()
  app = await startSignupApp({ smtp: inbox.smtp })
})
after(async () => {
  await app.close()
  await inbox.stop()
})

test('a new user confirms their address', async () => {
  const since = new Date()
  await fetch(`${app.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: 'cleo@example.com' }) })
  const mail = await inbox.waitFor({ to: 'cleo@example.com', since })
  const confirm = (await inbox.links(mail)).find((link) => link.text === 'Confirm your address')
  const page = await fetch(confirm.href)
  assert.match(await page.text(), /Address confirmed: cleo@example\.com/)
})
