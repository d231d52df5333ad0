import { expect, it } from 'vitest'
import { coalesced } from '../src/kit/runtime.js'

it('runs one task at a time, and calls made during a run share the one run queued after it', async () => {
  let active = 0
  let most = 0
  let runs = 0
  const run = coalesced(async () => {
    active++
    most = Math.max(most, active)
    await new Promise((resolve) => setTimeout(resolve, 5))
    active--
    return ++runs
  })
  const first = run()
  const during = [run(), run(), run()]
  expect(await first).toBe(1)
  expect(await Promise.all(during)).toEqual([2, 2, 2])
  expect(await run()).toBe(3)
  expect(most).toBe(1)
})

it('starts the queued run even when the one before it failed', async () => {
  let calls = 0
  const run = coalesced(async () => {
    if (++calls === 1) throw new Error('first fails')
    return calls
  })
  const failing = run()
  const next = run()
  await expect(failing).rejects.toThrow('first fails')
  expect(await next).toBe(2)
})
