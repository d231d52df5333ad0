import { existsSync } from 'node:fs'
import { crc32, deflateSync } from 'node:zlib'
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { BROWSER_SKIP_LINE, CHROMIUM } from './support/browser.js'

/** The system Chromium, headless; one per test file. `args` adds switches, e.g. `--host-resolver-rules`. */
export function launchBrowser(args: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`SVC_TEST_BROWSER=required: ${BROWSER_SKIP_LINE}`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
  })
}

/** Fails the test on any script error in the page. */
export function watchErrors(page: Page): Error[] {
  const errors: Error[] = []
  page.on('pageerror', (error) => errors.push(error))
  return errors
}

/** The list row of the message with this subject. */
/**
 * Keeps every notification the context's pages make where a test can read
 * and click it: `notifications(page)` lists each as [title, body],
 * `clickNotification(page, n)` clicks the nth. Permission is granted.
 */
export async function captureNotifications(context: BrowserContext, origin: string): Promise<void> {
  await context.grantPermissions(['notifications'], { origin })
  await context.addInitScript(() => {
    const Real = window.Notification
    const shown: Notification[] = []
    Object.assign(window, { shown })
    window.Notification = class extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options)
        shown.push(this)
      }
    }
  })
}

export const notifications = (page: Page) => page.evaluate(() => (window as unknown as { shown: Notification[] }).shown.map((n) => [n.title, n.body]))

export const clickNotification = (page: Page, index: number) =>
  page.evaluate((index) => {
    const notification = (window as unknown as { shown: Notification[] }).shown[index]
    notification!.onclick!(new Event('click'))
  }, index)

export const row = (page: Page, subject: string) => page.locator('.row[data-id]', { hasText: subject })

/** The sandboxed frame showing the open message's HTML body, once loaded. */
export async function mailFrame(page: Page, id: string): Promise<Frame> {
  // The page, its message and then its frame load in turn: on a busy machine that takes more than poll's default second.
  await expect.poll(() => page.frames().some((frame) => frame.url().endsWith(`/api/email/${id}/html`)), { timeout: 10_000 }).toBe(true)
  return page.frames().find((frame) => frame.url().endsWith(`/api/email/${id}/html`))!
}

/** The width of the first image in the frame once it finished loading (0 when it is broken). */
export async function loadedImageWidth(frame: Frame): Promise<number> {
  const width = () => frame.evaluate(() => {
    const image = document.querySelector('img')
    return image?.complete ? image.naturalWidth : -1
  })
  await expect.poll(width).toBeGreaterThanOrEqual(0)
  return width()
}

/** A PNG chunk: length, type, data, CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])))
  return Buffer.concat([head, data, crc])
}

/** A round violet badge, `size` pixels wide, as an RGBA PNG: the logo of the test mail. */
export function badgePng(size: number): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8)
  const pixels = Buffer.alloc(size * (size * 4 + 1))
  const r = size / 2
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const inside = (x + 0.5 - r) ** 2 + (y + 0.5 - r) ** 2 <= r * r
      const t = (x + y) / (2 * size)
      pixels.set(inside ? [99 + 40 * t, 102 - 10 * t, 241, 255] : [0, 0, 0, 0], y * (size * 4 + 1) + 1 + x * 4)
    }
  }
  const signature = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))])
}

export const LOGO_SIZE = 48

/** A message with an HTML body showing an inline image by `cid:`, and a text attachment. */
export const withInlineImage = (subject: string, paragraph = `This is ${subject}.`) => ({
  subject,
  text: `Plain text of ${subject}`,
  html: `<div style="font-family:Helvetica,Arial,sans-serif;max-width:520px;margin:24px auto;padding:32px;border:1px solid #e5e7eb;border-radius:12px;color:#111827">
<img alt="logo" src="cid:logo@svc" width="${LOGO_SIZE}" height="${LOGO_SIZE}">
<h1 style="font-size:22px;margin:20px 0 8px">${subject}</h1>
<p style="color:#4b5563;line-height:1.6">${paragraph}</p>
<p style="margin:28px 0"><a href="https://acme.test/confirm?token=7f3a9c" style="background:#4f46e5;color:#fff;padding:12px 20px;border-radius:8px;text-decoration:none;font-weight:600">Confirm your email</a></p>
<p style="color:#9ca3af;font-size:12px">Acme Inc. · 1 Infinite Loop · You get this mail because you signed up.</p></div>`,
  attachments: [
    { filename: 'logo.png', content: badgePng(LOGO_SIZE), cid: 'logo@svc' },
    { filename: 'notes.txt', content: 'attached notes' },
  ],
})
