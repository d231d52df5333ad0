import { createTestInbox } from 'svc-mail/testing'
import { expect, test } from 'vitest'
import { startSignupApp } from './signup-app.mjs'

test('a new user confirms their address', async () => {
  await using inbox = await createTestInbox()
  await using app = await startSignupApp({ smtp: inbox.smtp })
  await fetch(`${app.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: 'ann@example.com' }) })
  const mail = await inbox.waitFor({ to: 'ann@example.com', subject: 'Confirm your address' })
  const [confirm] = await inbox.links(mail)
  const page = await fetch(confirm!.href)
  expect(await page.text()).toContain('Address confirmed: ann@example.com')
})
