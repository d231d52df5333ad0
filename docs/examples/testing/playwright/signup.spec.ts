import { test as base, expect } from '@playwright/test'
import { createTestInbox, type TestInbox } from 'svc-mail/testing'
import { startSignupApp } from '../signup-app.mjs'

// One svc and one app per worker, stopped when the worker ends.
const test = base.extend<object, { inbox: TestInbox; app: { url: string } }>({
  inbox: [
    async ({}, use) => {
      const inbox = await createTestInbox()
      await use(inbox)
      await inbox.stop()
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ inbox }, use) => {
      const app = await startSignupApp({ smtp: inbox.smtp })
      await use(app)
      await app.close()
    },
    { scope: 'worker' },
  ],
})

test('sign up, then follow the link in the mail', async ({ page, inbox, app }) => {
  await page.goto(app.url)
  await page.getByLabel('Email').fill('bob@example.com')
  await page.getByRole('button', { name: 'Sign up' }).click()
  await expect(page.getByText('Check your inbox')).toBeVisible()
  const mail = await inbox.waitFor({ to: 'bob@example.com', subject: 'Confirm' })
  const [confirm] = await inbox.links(mail)
  await page.goto(confirm!.href)
  await expect(page.getByRole('heading')).toHaveText('Address confirmed: bob@example.com')
})
