import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectJsonError, rawGet } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** A 1x1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')
const REPORT = 'id,total\n1,42\n'

let t: TestSvc
let rich: string
let plain: string

beforeAll(async () => {
  t = await startSvc()
  rich = (
    await t.send({
      subject: 'Rich',
      text: 'Rich text part',
      html: [
        '<p>Logo: <img src="cid:logo@svc" alt="logo"></p>',
        '<div style="background:url(cid:logo@svc)">bg</div>',
        '<img src="cid:unknown@svc">',
        '<script>alert("a")</script><SCRIPT type="text/javascript">alert("b")</SCRIPT >',
        '<scr<script>x</script>ipt>alert("c")</script>',
        '<a href="javascript:alert(1)" onclick="steal()" title="keep">link</a>',
        '<a href=" JaVa&#x09;ScRiPt:alert(2)">entity link</a>',
        '<img src=x onerror=alert(3) ONLOAD="alert(4)">',
        '<iframe srcdoc="&lt;script&gt;alert(5)&lt;/script&gt;"></iframe>',
        '<a href="https://example.com/?q=onclick=1" target="_blank" rel="noopener noreferrer">safe</a>',
      ].join('\n'),
      attachments: [
        { filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@svc' },
        { filename: 'report.csv', content: REPORT, contentType: 'text/csv' },
        { filename: 'report.csv', content: 'second', contentType: 'text/csv' },
        { content: 'no name', contentType: 'text/plain' },
      ],
    })
  ).id
  plain = (await t.send({ subject: 'Plain', text: 'Only text' })).id
})
afterAll(() => t.stop())

describe('GET /api/email/:id/html', () => {
  let html: string
  let response: Response
  beforeAll(async () => {
    response = await t.api(`/api/email/${rich}/html`)
    html = await response.text()
  })

  it('serves text/html with a policy that forbids scripts', () => {
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toMatch(/(^|; )script-src 'none'(;|$)/)
  })

  it('opens links in a new tab rather than inside the frame', () => {
    expect(html.startsWith('<base target="_blank">')).toBe(true)
  })

  it('inlines cid: references as data URIs of the attachment', () => {
    const dataUri = `data:image/png;base64,${PNG.toString('base64')}`
    expect(html).toContain(`<img src="${dataUri}" alt="logo" />`)
    expect(html).toContain(`background:url(${dataUri})`)
    expect(html).not.toContain('cid:logo@svc')
    expect(html).toContain('cid:unknown@svc')
  })

  it('puts a large image referenced 120 times in once plus 4 MiB of repeats, and a small one at every reference', async () => {
    // 1 MB of image: copied at each reference, the HTML would be 160 MB (at 7 MB, a 500).
    const large = Buffer.concat([PNG, Buffer.alloc(1024 * 1024, 7)])
    const { id } = await t.send({
      subject: 'Many references',
      html: `${'<img src="cid:large@svc">'.repeat(120)}${'<img src="cid:dot@svc">'.repeat(50)}`,
      attachments: [
        { filename: 'large.png', content: large, contentType: 'image/png', cid: 'large@svc' },
        { filename: 'dot.png', content: PNG, contentType: 'image/png', cid: 'dot@svc' },
      ],
    })
    const response = await t.api(`/api/email/${id}/html`)
    expect(response.status).toBe(200)
    const body = await response.text()
    const largeUri = `data:image/png;base64,${large.toString('base64')}`
    expect(body.split(largeUri)).toHaveLength(1 + 1 + Math.floor((4 * 1024 * 1024) / largeUri.length))
    expect(body.length).toBeLessThan(8 * 1024 * 1024)
    expect(body.split(`data:image/png;base64,${PNG.toString('base64')}"`)).toHaveLength(51)
  })

  it('removes script elements, event handlers and javascript: URLs, and keeps the rest', () => {
    expect(html).not.toMatch(/<script/i)
    // Every script payload is gone; of the split tag only its text stays, shown as text as a browser would.
    expect(html.match(/alert\([^)]*\)/g)).toEqual(['alert("c")'])
    expect(html).toContain('<span>xipt&gt;alert("c")')
    expect(html).not.toMatch(/javascript/i)
    expect(html).not.toMatch(/\son\w+=/i)
    expect(html).not.toMatch(/srcdoc/i)
    expect(html).toContain('<a title="keep" target="_blank" rel="noopener noreferrer">link</a>')
    expect(html).toContain('<a href="https://example.com/?q=onclick=1" target="_blank" rel="noopener noreferrer">safe</a>')
    expect(html).toContain('<p>Logo: ')
  })

  it('answers 404 for an email without HTML and for an unknown id', async () => {
    await expectJsonError(await t.api(`/api/email/${plain}/html`), 404)
    await expectJsonError(await t.api('/api/email/nope/html'), 404)
  })
})

describe('GET /api/email/:id/source and /download', () => {
  it('source is the raw message as text/plain', async () => {
    const response = await t.api(`/api/email/${plain}/source`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
    const source = await response.text()
    expect(source).toMatch(/^Subject: Plain\r$/m)
    expect(source).toContain('Only text')
    expect(Buffer.byteLength(source)).toBe((await t.svc.store.summary(plain))!.size)
  })

  it('download is message/rfc822 named <id>.eml', async () => {
    const response = await t.api(`/api/email/${plain}/download`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('message/rfc822')
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${plain}.eml"`)
    expect(Buffer.from(await response.arrayBuffer()).equals((await t.svc.store.raw(plain))!)).toBe(true)
  })

  it('both answer 404 for an unknown id', async () => {
    await expectJsonError(await t.api('/api/email/nope/source'), 404)
    await expectJsonError(await t.api('/api/email/nope/download'), 404)
  })
})

describe('GET /api/email/:id/attachment/:filename', () => {
  const get = (name: string) => t.api(`/api/email/${rich}/attachment/${encodeURIComponent(name)}`)

  it('serves an attachment by filename with its own content type', async () => {
    const response = await get('logo.png')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/png')
    expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).toBe(true)
    const csv = await get('report.csv')
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/)
    expect(await csv.text()).toBe(REPORT)
  })

  it('serves attachments by generatedFileName, which tells same-named and unnamed ones apart', async () => {
    const email = (await t.svc.store.get(rich))!
    expect(email.attachments.map((a) => a.generatedFileName)).toEqual(['logo.png', 'report.csv', 'report-1.csv', 'attachment-4.txt'])
    expect(await (await get('report-1.csv')).text()).toBe('second')
    expect(await (await get('attachment-4.txt')).text()).toBe('no name')
  })

  it('answers 404 for names that are not attachments of this email, traversal included', async () => {
    await expectJsonError(await get('missing.png'), 404)
    await expectJsonError(await get('LOGO.PNG'), 404)
    await expectJsonError(await t.api(`/api/email/${plain}/attachment/logo.png`), 404)
    await expectJsonError(await t.api('/api/email/nope/attachment/logo.png'), 404)
    const attempts = [
      '../../../../etc/passwd',
      '..%2F..%2F..%2Fetc%2Fpasswd',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '%2e%2e/%2e%2e/package.json',
      '..%5c..%5cpackage.json',
      '%252e%252e%252fpackage.json',
      '%2Fetc%2Fpasswd',
      '/etc/passwd',
      '.',
      '%00',
    ]
    for (const attempt of attempts) {
      const { status, body } = await rawGet(t.baseUrl, `/api/email/${rich}/attachment/${attempt}`)
      expect(status, attempt).toBe(404)
      expect(body).not.toMatch(/root:|"name":\s*"svc"/)
    }
  })

  it('answers a malformed percent-encoding with a JSON 400, not a 500', async () => {
    const { status, body } = await rawGet(t.baseUrl, `/api/email/${rich}/attachment/%E0%A4%A`)
    expect(status).toBe(400)
    expect(JSON.parse(body)).toEqual({ error: expect.any(String) })
  })
})

describe('POST /api/email/:id/relay', () => {
  it('answers 400 when no outgoing server is configured, 404 for an unknown id', async () => {
    const message = await expectJsonError(await t.api(`/api/email/${plain}/relay`, { method: 'POST' }), 400)
    expect(message).toMatch(/outgoing/)
    await expectJsonError(await t.api('/api/email/nope/relay', { method: 'POST' }), 404)
  })
})

describe('GET /api/reloadMailsFromDirectory', () => {
  it('answers 400 when no mail directory is set', async () => {
    const message = await expectJsonError(await t.api('/api/reloadMailsFromDirectory'), 400)
    expect(message).toMatch(/mail-directory/)
  })
})
