import { afterAll, beforeAll, expect, it } from 'vitest'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
beforeAll(async () => {
  t = await startSvc()
})
afterAll(() => t.stop())

it('stores a message sent over SMTP', async () => {
  const { id } = await t.send({ subject: 'Smoke' })
  const email = await t.svc.smtp.getEmail(id)
  expect(email?.subject).toBe('Smoke')
})
